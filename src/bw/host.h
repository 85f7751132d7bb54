// Host memory bandwidth with many threads: read, write and copy of a large buffer split between
// one thread per CPU, each thread bound to its own CPU where the kernel allows it. Bytes are
// counted as for the device (stats.h): a read counts the bytes read, a write the bytes
// written, a copy both (2 x buffer per run). On GB10 this is the same LPDDR5x the GPU uses.
//
// Memory: two buffers of the chosen size, first touched by the thread that later reads them
// (so each slice lands on that thread's memory node), released before measure_host returns.
// Threading: starts and joins its own threads; call from one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bw/device.h"
#include "core/result.h"
#include "model/snapshot.h"

namespace sparkdoc::bw {

struct HostOptions {
  uint64_t buffer_bytes = kDefaultBufferBytes;  // each of the two buffers
  unsigned threads = 0;  // 0: one per CPU this process may run on
  int runs = 20;
  int warmup_runs = 3;
  bool pin = true;  // bind thread i to the i-th CPU this process may run on
};

// The CPUs this process may run on (sched_getaffinity), ascending; when the kernel will not
// say, 0 .. hardware_concurrency - 1.
std::vector<int> usable_cpus();

// The host buffer: `wanted`, capped so that the two buffers take at most half of
// `mem_available_bytes` (MemAvailable) when that is known; a note says when it was capped.
SizeChoice cap_host_buffer(uint64_t wanted, std::optional<uint64_t> mem_available_bytes);

// Errors: no timed run asked for, the buffers cannot be allocated, no thread can be started.
// A thread that cannot be bound to its CPU runs unbound (HostBandwidth::pinned says which).
Result<HostBandwidth> measure_host(const HostOptions& options, const Progress& progress = {});

}  // namespace sparkdoc::bw
