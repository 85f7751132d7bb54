#include "load/checkpoint_plan.h"

#include <fmt/format.h>

#include <numeric>

#include "core/units.h"

namespace sparkdoc::load {

Outcome<CopyPlan> plan_tensors(const safetensors::Checkpoint& checkpoint,
                               std::span<const uint32_t> tensors,
                               std::span<const uint64_t> destinations) {
  if (tensors.size() != destinations.size()) {
    return failure(Fault::kInvalidArgument, fmt::format("{} tensors but {} destinations",
                                                        tensors.size(), destinations.size()));
  }
  CopyPlan plan;
  plan.files.reserve(checkpoint.shards.size());
  for (const auto& shard : checkpoint.shards) plan.files.push_back(shard.path);
  plan.copies.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i] >= checkpoint.tensors.size()) {
      return failure(Fault::kInvalidArgument,
                     fmt::format("tensor index {} is out of range: the checkpoint has {} tensors",
                                 tensors[i], checkpoint.tensors.size()));
    }
    const auto& t = checkpoint.tensors[tensors[i]];
    plan.copies.push_back(
        Copy{t.shard, t.offset, t.bytes, destinations[i], fmt::format("tensor '{}'", t.name)});
  }
  return plan;
}

Outcome<CheckpointMemory> CheckpointMemory::allocate(const DeviceSession& session,
                                                     const safetensors::Checkpoint& checkpoint) {
  CurrentContext current(session);
  if (!current.status()) return tl::unexpected(current.status().error());
  CheckpointMemory memory;
  memory.shards_.reserve(checkpoint.shards.size());
  for (const auto& shard : checkpoint.shards) {
    auto buffer = DeviceBuffer::allocate(session, shard.data_bytes);
    if (!buffer) {
      return failure(
          buffer.error().fault,
          fmt::format("{}: cannot allocate {} on GPU {} for its tensors: {}", shard.path,
                      format_gb(shard.data_bytes), session.ordinal(), buffer.error().message));
    }
    memory.shards_.push_back(std::move(*buffer));
  }
  memory.addresses_.reserve(checkpoint.tensors.size());
  for (const auto& t : checkpoint.tensors) {
    const auto& shard = checkpoint.shards[t.shard];
    const uint64_t data_start = safetensors::kLengthPrefixBytes + shard.header_bytes;
    memory.addresses_.push_back(
        t.bytes == 0 ? 0 : memory.shards_[t.shard].address() + (t.offset - data_start));
  }
  return memory;
}

uint64_t CheckpointMemory::bytes() const {
  uint64_t total = 0;
  for (const auto& buffer : shards_) total += buffer.size();
  return total;
}

Outcome<CopyPlan> plan_checkpoint(const safetensors::Checkpoint& checkpoint,
                                  const CheckpointMemory& memory) {
  std::vector<uint32_t> all(checkpoint.tensors.size());
  std::iota(all.begin(), all.end(), 0u);
  return plan_tensors(checkpoint, all, memory.addresses());
}

}  // namespace sparkdoc::load
