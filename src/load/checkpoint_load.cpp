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
// names of those that differ; an error when a read or copy fails.
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
  for (uint32_t i = 0; i < checkpoint.tensors.size(); ++i) {
    const auto& t = checkpoint.tensors[i];
    for (uint64_t done = 0; done < t.bytes;) {
      uint64_t n = std::min(kPiece, t.bytes - done);
      uint64_t delivered = 0;
      auto at =
          files[t.shard]->read(t.offset + done, t.offset + done + n, from_file.data(), delivered);
      if (!at) return tl::unexpected(as_failure(at.error(), Fault::kIo));
      files[t.shard]->drop(t.offset + done, t.offset + done + n);
      auto copied =
          session.check(session.api().memcpy_dtoh(from_device.data(), memory.address(i) + done, n),
                        "cuMemcpyDtoH_v2");
      if (!copied) return tl::unexpected(copied.error());
      if (std::memcmp(from_file.data() + *at, from_device.data(), n) != 0) {
        differ.push_back(t.name);
        break;
      }
      done += n;
    }
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
