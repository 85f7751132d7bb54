// From a safetensors checkpoint (safetensors/checkpoint.h: tensors with their shard, absolute
// offset and size) to the loader's plan of copies, and device memory for a whole checkpoint.
// This is the only place the loader knows the checkpoint format.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "load/device.h"
#include "load/plan.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::load {

// A plan copying `tensors` (indexes into checkpoint.tensors) to `destinations` (one device
// address each; 0 allowed for an empty tensor). Every shard of the checkpoint is a file of the
// plan. Errors (kInvalidArgument): the spans differ in length, an index out of range.
Outcome<CopyPlan> plan_tensors(const safetensors::Checkpoint& checkpoint,
                               std::span<const uint32_t> tensors,
                               std::span<const uint64_t> destinations);

// Device memory for every tensor of a checkpoint, allocated by the loader: one buffer per
// shard holding its data section, so each tensor keeps the alignment it has in the file.
class CheckpointMemory {
 public:
  // All or nothing: a failed allocation (out of memory) frees the shards' buffers already
  // made and names the shard and its size.
  static Outcome<CheckpointMemory> allocate(const DeviceSession& session,
                                            const safetensors::Checkpoint& checkpoint);

  // The device address of tensor `index` (0 for an empty tensor).
  uint64_t address(uint32_t index) const { return addresses_[index]; }
  const std::vector<uint64_t>& addresses() const { return addresses_; }
  // The device address of shard `shard`'s data: its tensors lie there as in the file.
  uint64_t shard_address(size_t shard) const { return shards_[shard].address(); }
  uint64_t bytes() const;

 private:
  std::vector<DeviceBuffer> shards_;
  std::vector<uint64_t> addresses_;
};

// The plan that fills a CheckpointMemory with every tensor.
Outcome<CopyPlan> plan_checkpoint(const safetensors::Checkpoint& checkpoint,
                                  const CheckpointMemory& memory);

}  // namespace sparkdoc::load
