// load/load.h's checkpoint pipeline, apart from the driver and run_plan so that
// libsparkdoc.so, which needs only those, links none of tune.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/fs.h"
#include "load/checkpoint_plan.h"
#include "load/device.h"
#include "load/load.h"
#include "load/source_file.h"
#include "tune/tunables.h"

namespace sparkdoc::load {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Compares every tensor's device bytes with a plain buffered read of its file. Returns the
// names of those that differ, in the checkpoint's order; an error when a read or copy fails.
//
// A shard's tensors tile its data with no gap (the header parser checks it) and lie in one
// device buffer as in the file, so the comparison goes a shard at a time in 32 MiB pieces, and
// only a piece that differs is looked at tensor by tensor. One read and one copy per tensor
// took 70 s for a million tiny tensors (a driver round trip each); a piece holds thousands.
Outcome<std::vector<std::string>> verify(const Loader& loader,
                                         const safetensors::Checkpoint& checkpoint,
                                         const CheckpointMemory& memory) {
  const DeviceSession& session = loader.session();
  CurrentContext current(session);
  if (!current.status()) return tl::unexpected(current.status().error());
  if (!session.api().memcpy_dtoh) {
    return failure(Fault::kNoCuda, session.api().memcpy_dtoh.missing());
  }
  constexpr uint64_t kPiece = 32ull << 20;
  std::vector<unsigned char> from_file(kPiece + 2 * kMaxDirectAlign);
  std::vector<unsigned char> from_device(kPiece);
  std::vector<std::string> differ;
  std::vector<std::unique_ptr<SourceFile>> files;
  for (const auto& shard : checkpoint.shards) {
    auto file = SourceFile::open(shard.path, {DirectIo::kOff, true});
    if (!file) return tl::unexpected(as_failure(file.error(), Fault::kIo));
    files.push_back(std::move(*file));
  }
  // Each shard's tensors by their place in the data.
  std::vector<std::vector<uint32_t>> by_shard(checkpoint.shards.size());
  for (uint32_t i = 0; i < checkpoint.tensors.size(); ++i) {
    if (checkpoint.tensors[i].bytes > 0) by_shard[checkpoint.tensors[i].shard].push_back(i);
  }
  std::vector<bool> differs(checkpoint.tensors.size(), false);
  for (size_t s = 0; s < checkpoint.shards.size(); ++s) {
    std::vector<uint32_t>& order = by_shard[s];
    if (order.empty()) continue;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return checkpoint.tensors[a].offset < checkpoint.tensors[b].offset;
    });
    const auto& shard = checkpoint.shards[s];
    const uint64_t data_start = safetensors::kLengthPrefixBytes + shard.header_bytes;
    size_t first = 0;  // the first tensor that ends after the piece's start
    for (uint64_t done = 0; done < shard.data_bytes;) {
      const uint64_t n = std::min(kPiece, shard.data_bytes - done);
      const uint64_t begin = data_start + done;
      uint64_t delivered = 0;
      auto at = files[s]->read(begin, begin + n, from_file.data(), delivered);
      if (!at) return tl::unexpected(as_failure(at.error(), Fault::kIo));
      files[s]->drop(begin, begin + n);
      auto copied = session.check(
          session.api().memcpy_dtoh(from_device.data(), memory.shard_address(s) + done, n),
          "cuMemcpyDtoH_v2");
      if (!copied) return tl::unexpected(copied.error());
      const unsigned char* file_bytes = from_file.data() + *at;
      const bool same = std::memcmp(file_bytes, from_device.data(), n) == 0;
      while (first < order.size() &&
             checkpoint.tensors[order[first]].offset + checkpoint.tensors[order[first]].bytes <=
                 begin) {
        ++first;
      }
      for (size_t k = first; !same && k < order.size(); ++k) {
        const auto& t = checkpoint.tensors[order[k]];
        if (t.offset >= begin + n) break;
        const uint64_t from = std::max(t.offset, begin) - begin;
        const uint64_t to = std::min(t.offset + t.bytes, begin + n) - begin;
        if (std::memcmp(file_bytes + from, from_device.data() + from, to - from) != 0) {
          differs[order[k]] = true;
        }
      }
      done += n;
    }
  }
  for (uint32_t i = 0; i < checkpoint.tensors.size(); ++i) {
    if (differs[i]) differ.push_back(checkpoint.tensors[i].name);
  }
  return differ;
}

}  // namespace

const Measured& CheckpointLoad::best() const {
  return *std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.stats.gb_per_second() < b.stats.gb_per_second();
  });
}

Outcome<CheckpointLoad> load_checkpoint(const CheckpointRequest& request, Observer* observer) {
  auto checkpoint = safetensors::open_checkpoint(request.path);
  if (!checkpoint) return tl::unexpected(as_failure(checkpoint.error(), Fault::kBadCheckpoint));
  auto cuda = cuda_driver();
  if (!cuda) return tl::unexpected(cuda.error());

  CheckpointLoad out;
  const auto setup_start = Clock::now();
  auto loader = Loader::create(**cuda, request.device, request.options);
  if (!loader) return tl::unexpected(loader.error());
  out.setup_seconds = seconds_since(setup_start);
  const auto alloc_start = Clock::now();
  auto memory = CheckpointMemory::allocate((*loader)->session(), *checkpoint);
  if (!memory) return tl::unexpected(memory.error());
  out.alloc_seconds = seconds_since(alloc_start);
  auto plan = plan_checkpoint(*checkpoint, *memory);
  if (!plan) return tl::unexpected(plan.error());

  const int runs = std::max(request.runs, 1);
  for (int r = 0; r < runs; ++r) {
    if (request.drop_caches) {
      if (auto dropped = tune::sync_and_drop_caches(Root()); !dropped) {
        Failure f = as_failure(dropped.error(), Fault::kIo);
        f.message = "--drop-caches: " + f.message;
        return tl::unexpected(std::move(f));
      }
    }
    std::atomic<uint64_t> done{0};
    Measured m;
    if (observer != nullptr) observer->run_starting(done, checkpoint->data_bytes());
    auto ran = run_plan(**loader, *plan, &m.memory, &done);
    if (observer != nullptr) observer->run_stopped();
    if (!ran) return tl::unexpected(ran.error());
    m.stats = std::move(*ran);
    out.runs.push_back(std::move(m));
    if (observer != nullptr) observer->measured(r + 1, out.runs.back());
  }

  if (request.verify) {
    auto checked = verify(**loader, *checkpoint, *memory);
    if (!checked) return failure(checked.error().fault, "--verify: " + checked.error().message);
    out.differ = std::move(*checked);
  }
  out.options = (*loader)->options();
  out.staging_bytes = (*loader)->staging_bytes();
  out.checkpoint = std::move(*checkpoint);
  return out;
}

}  // namespace sparkdoc::load
