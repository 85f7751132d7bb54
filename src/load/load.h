// The load pipeline behind `sparkdoc load` and libsparkdoc.so's C ABI: the driver and a Loader
// on one device, a run of a plan with what it cost in host memory, and a whole checkpoint
// loaded into memory the loader allocates, run one or more times and optionally verified.
// Both callers go through here, so a change to the pipeline reaches both.
//
// Threading: as Loader (one run at a time per Loader). load_checkpoint calls the observer
// from the calling thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda_api.h"
#include "load/failure.h"
#include "load/loader.h"
#include "load/memory_watch.h"
#include "load/plan.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::load {

// The process's CUDA driver (gpu::Cuda::instance()). Errors (kNoCuda): no usable driver.
Outcome<const gpu::Cuda*> cuda_driver();

// Runs `plan` once on `loader`; with `out_memory`, watches the resident set and the page cache
// around it (MemoryWatch resets the process's peak RSS, so only callers that report it ask).
Outcome<LoadStats> run_plan(Loader& loader, const CopyPlan& plan, MemoryUse* out_memory,
                            std::atomic<uint64_t>* progress = nullptr);

// One timed run of a checkpoint and what it cost.
struct Measured {
  LoadStats stats;
  MemoryUse memory;
};

struct CheckpointRequest {
  std::string path;  // a file, an index, a model folder or a Hugging Face cache entry
  int device = 0;
  LoaderOptions options;
  int runs = 1;              // at least one is run
  bool drop_caches = false;  // sync and drop the page cache before each run (root)
  bool verify = false;       // compare the device bytes with a plain read of the files after
};

// What a load says while it goes; `sparkdoc load` draws a progress line and prints each run.
class Observer {
 public:
  virtual ~Observer() = default;
  // Around each run: `done` grows towards `total_bytes` while the loader's threads copy.
  virtual void run_starting(const std::atomic<uint64_t>& done, uint64_t total_bytes) = 0;
  virtual void run_stopped() = 0;
  virtual void measured(int number, const Measured& run) = 0;  // number: 1-based
};

struct CheckpointLoad {
  safetensors::Checkpoint checkpoint;
  LoaderOptions options;  // as the loader settled them (reader count, rounded chunk)
  uint64_t staging_bytes = 0;
  double setup_seconds = 0;  // the context, the staging ring, streams and events
  double alloc_seconds = 0;  // the device memory for the tensors
  std::vector<Measured> runs;
  // With verify: the tensors whose device bytes differ from the file (empty: all match).
  std::optional<std::vector<std::string>> differ;

  const Measured& best() const;  // the fastest run; precondition: runs not empty
  bool ok() const { return !differ || differ->empty(); }
};

// Opens the checkpoint, makes a Loader and the device memory, runs the copy `request.runs`
// times and verifies when asked; the device memory is freed before it returns. Errors: the
// first failure of any step, with its message (a run's names the file and tensor).
Outcome<CheckpointLoad> load_checkpoint(const CheckpointRequest& request, Observer* observer);

}  // namespace sparkdoc::load
