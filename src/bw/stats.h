// The arithmetic of `sparkdoc bw`: which bytes a timed run counts, and how timed runs become
// the best and median rates. Pure; no clock.
//
// Counting convention (reference §7): a copy of N bytes reads N bytes and writes N bytes, so a
// copy counts 2 x N, as the community's torch-clone figure does (`x.clone()`: bytes read +
// bytes written over the time). nvbandwidth's device_local_copy prints N / time instead, half
// this figure. A one-way transfer (host to device, device to host), a read and a write count N.
#pragma once

#include <cstdint>
#include <span>

#include "core/result.h"
#include "model/snapshot.h"

namespace sparkdoc::bw {

// Bytes a copy of `size_bytes` moves through memory: read once, written once.
constexpr uint64_t copy_traffic_bytes(uint64_t size_bytes) { return 2 * size_bytes; }

// `bytes` in `milliseconds`, as GB/s (1e9 bytes per second). Precondition: milliseconds > 0.
double gbps(uint64_t bytes, double milliseconds);

// The best (fastest run) and median rates of `times_ms`, each run having counted
// `bytes_per_run`. Errors: no runs, or a time that is not a positive finite number (a timer
// that did not tick cannot be turned into a rate).
Result<TransferRate> summarize(std::span<const double> times_ms, uint64_t bytes_per_run);

}  // namespace sparkdoc::bw
