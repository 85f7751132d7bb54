// What a run log says in a few numbers: duration, peak GPU and host memory, time power-capped
// or slowed, events. `sparkdoc run` prints it when the command ends; `sparkdoc report` prints it
// without -o and puts it at the top of the HTML page (the renderings are report/run_summary.h
// and report/run_page.h). Pure functions of the log.
//
// Rules:
//  - Elapsed time counts from run_start, else from the first sample, else from the header's
//    start.
//  - GPU memory of a sample: the sum of the GPUs' mem_used_bytes when any GPU reports it, else
//    the sum of the GPU processes' used_bytes (GB10 has no framebuffer figure; its processes
//    still report what they hold).
//  - Host memory used: total_bytes - available_bytes. Page cache: Cached + Buffers - Shmem
//    (facts::page_cache_bytes; a log without Buffers or Shmem counts them as 0).
//  - Time power-capped: from the cumulative clock-event counters (GB10 reads the instantaneous
//    reasons as 0x0 while capped, so deltas tell the truth): per step between two samples
//    that carry counters, the largest increase of a counter that facts/throttle.h counts as
//    power capping, at most the step. Time slowed: the same for its slowdown counters. Without
//    counters, the intervals that start with a power-cap or a slowdown reason bit set. A
//    counter that goes down (driver reload) counts nothing for that step. Over several GPUs
//    the largest total is reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/runlog.h"

namespace sparkdoc::facts {

struct ProcessPeak {
  uint32_t pid = 0;
  std::string name;  // empty when the log has none
  uint64_t peak_bytes = 0;
  bool operator==(const ProcessPeak&) const = default;
};

struct GpuSummary {
  unsigned index = 0;
  std::string name;
  std::optional<double> power_limit_w;
  std::optional<double> max_power_w;
  std::optional<double> max_temp_c;
  std::optional<double> first_temp_c;
  std::optional<double> min_sm_clock_mhz;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> power_capped_s;
  std::optional<double> slowed_s;
  std::string throttle_source;  // "clock-event counters", "clock-event reasons", ""
  bool operator==(const GpuSummary&) const = default;
};

struct RunSummary {
  std::string host;
  std::string platform;
  std::string started;  // ISO 8601 UTC: run_start's time, else the header's
  std::vector<std::string> argv;
  double origin_ts = 0;  // elapsed time counts from here
  std::optional<double> duration_s;
  size_t samples = 0;
  std::optional<double> interval_s;

  std::optional<uint64_t> peak_gpu_mem_bytes;
  std::optional<double> peak_gpu_mem_at_s;
  std::string gpu_mem_source;              // "device" | "processes"
  std::vector<ProcessPeak> process_peaks;  // largest first, at most kMaxProcessPeaks

  std::optional<uint64_t> host_total_bytes;
  std::optional<uint64_t> peak_host_used_bytes;
  std::optional<uint64_t> min_available_bytes;
  std::optional<uint64_t> peak_page_cache_bytes;
  std::optional<uint64_t> peak_swap_used_bytes;
  std::optional<double> max_psi_some_avg10;
  std::optional<double> max_psi_full_avg10;

  std::vector<GpuSummary> gpus;
  std::optional<double> power_capped_s;  // the largest over the GPUs
  std::optional<double> slowed_s;

  std::map<std::string, size_t> events_by_kind;
  size_t warn_events = 0;
  std::vector<runlog::Event> events;

  size_t cache_drops = 0;
  size_t cache_drop_failures = 0;
  std::optional<std::string> load_window_end;

  std::optional<runlog::RunStart> start;
  std::optional<runlog::RunEnd> end;
  std::vector<std::string> notes;  // log damage, missing telemetry
  bool operator==(const RunSummary&) const = default;
};

inline constexpr size_t kMaxProcessPeaks = 5;

RunSummary summarize_run(const runlog::RunLog& log);

// GPU memory in one sample by the rule above; nullopt when it has no reading.
std::optional<uint64_t> sample_gpu_memory(const runlog::Sample& sample);

}  // namespace sparkdoc::facts
