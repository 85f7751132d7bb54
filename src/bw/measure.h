// One `sparkdoc bw` run on this machine, as a BwReport: the device copy and the pinned
// transfers through the CUDA driver, the host memory bandwidth with its buffers capped to the
// memory available (/proc/meminfo), and the nominal figure the device copy is compared with
// (GB10's on a DGX Spark, else the device's by name when known). Missing parts are recorded
// with the reason (no driver, --no-host), never an error.
// Threading: one run at a time per process (the measurements take the GPU and every CPU).
#pragma once

#include <cstdint>
#include <optional>

#include "bw/device.h"
#include "bw/record.h"
#include "facts/platform.h"

namespace sparkdoc::bw {

struct RunOptions {
  int ordinal = 0;
  std::optional<uint64_t> buffer_bytes;  // --size, for every buffer; else chosen per part
  int runs = 20;                         // timed runs of each measurement
  int warmup_runs = 3;
  unsigned threads = 0;   // host threads; 0: one per CPU this process may run on
  bool host = true;       // measure host memory
  bool transfers = true;  // measure the pinned host-to-device and device-to-host copies
};

// `platform` is the machine's (facts::classify_platform of its snapshot); `progress` is told
// each part's runs as they finish.
BwReport measure(const RunOptions& options, const facts::Platform& platform,
                 const Progress& progress = {});

}  // namespace sparkdoc::bw
