// A fresh CUDA context, for the cleanup before a model load (000 §6 step 4: "Creating a new
// CUDA context forces the driver to GC orphaned HBM allocations from any prior dead
// containers"; the seed does it with torch.cuda.init() in a throwaway container).
//
// This creates a context in the calling process: on GB10 it takes some hundreds of MB of the
// shared memory while it lives, and it is released before the call returns. After it the
// process has initialised CUDA: a forked child must exec before touching CUDA again.
// Threading: call from one thread at a time (the context is pushed on the caller's thread).
#pragma once

#include <cstdint>

#include "core/result.h"
#include "gpu/cuda_api.h"

namespace sparkdoc::gpu {

// What the driver reports from inside the new context. cuMemGetInfo's free figure is the
// seed's "GPU free" (torch.cuda.mem_get_info); on unified memory it leaves out swap and
// memory the kernel could reclaim (reference §3.1), so it is a reading, not the headroom.
struct ContextMemory {
  int ordinal = 0;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  double elapsed_ms = 0;  // cuInit to release, as the step's duration
  bool operator==(const ContextMemory&) const = default;
};

// cuInit(0), then the device's primary context retained (created: this process holds none),
// pushed, cuMemGetInfo_v2, popped and released. The primary context is the one the CUDA
// runtime and PyTorch use, so this is the context torch.cuda.init() would make. Errors name
// the failing call; a driver without the context entry points answers not_supported.
Result<ContextMemory> fresh_context_mem_info(const Cuda& cuda, int ordinal);

}  // namespace sparkdoc::gpu
