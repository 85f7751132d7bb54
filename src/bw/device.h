// GPU bandwidth through the CUDA driver API: a device-to-device copy (read + write counted, see
// stats.h) and pinned host-to-device and device-to-host transfers, each timed with events.
//
// The measurement retains the device's primary context (the one the CUDA runtime and PyTorch
// use) and makes it current on the calling thread; it allocates two device buffers, a stream,
// two events and, for the transfers, one pinned host buffer. Every one of them is released,
// and the context made not current and released, before measure_device returns, on every
// path. While it runs it holds 2 x the buffer size of device memory (on GB10: of the shared
// system memory) plus the buffer size of pinned host memory.
// Threading: call from one thread at a time; after it the process has initialised CUDA, so a
// forked child must exec before touching CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/reading.h"
#include "core/result.h"
#include "core/units.h"
#include "gpu/cuda_api.h"
#include "model/snapshot.h"

namespace sparkdoc::bw {

// 2 GiB each way: far larger than any L2 cache (50 MB on an H100, 60 MB on a B200), so the
// copy streams from memory, and large enough that launch overhead vanishes.
inline constexpr uint64_t kDefaultBufferBytes = 2 * kGiB;
// Below this a buffer is within a few times the L2 cache and the figure may be the cache's.
inline constexpr uint64_t kMinMemoryBufferBytes = 256 * kMiB;

struct DeviceOptions {
  int ordinal = 0;
  // --size: each buffer. nullopt: kDefaultBufferBytes, capped by the device's free memory.
  std::optional<uint64_t> buffer_bytes;
  int runs = 20;        // timed runs of each kind
  int warmup_runs = 3;  // untimed runs first (first-touch, clocks ramping up)
  bool transfers = true;  // also pinned H2D and D2H
};

struct SizeChoice {
  uint64_t bytes = 0;
  std::optional<std::string> note;  // why the size is not the one asked for, or a caution
};
// The buffer size: `requested` as given (with a caution when it is small enough for the L2
// cache to answer), else the default, capped so that the two buffers take at most half of
// `free_bytes`. Fails when even the cap leaves less than kMinMemoryBufferBytes.
Result<SizeChoice> choose_buffer_bytes(std::optional<uint64_t> requested, uint64_t free_bytes);

struct DeviceResult {
  int ordinal = 0;
  std::string name;  // cuDeviceGetName; empty when the driver would not say
  uint64_t buffer_bytes = 0;
  uint64_t free_bytes = 0;   // cuMemGetInfo in the context, before the buffers
  uint64_t total_bytes = 0;
  int warmup_runs = 0;         // untimed runs before each kind's timed runs
  TransferRate copy;           // bytes_per_run = copy_traffic_bytes(buffer_bytes)
  Reading<TransferRate> h2d;   // bytes_per_run = buffer_bytes; absent when not measured
  Reading<TransferRate> d2h;
  std::vector<std::string> notes;
};

// Which phase is running ("device copy", "pinned H2D", ...), runs done and runs in it
// (warm-up included). Called on the measuring thread.
using Progress = std::function<void(std::string_view phase, int done, int total)>;

// Errors name the driver call that failed; no driver device is Why::kAbsent, a device out of
// memory says how much was asked for and how much the driver reported free. A failure of the
// pinned transfers alone leaves the copy measured and the transfers absent with the reason.
Result<DeviceResult> measure_device(const gpu::Cuda& cuda, const DeviceOptions& options,
                                    const Progress& progress = {});

}  // namespace sparkdoc::bw
