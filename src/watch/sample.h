// What `sparkdoc watch` records: a header once, then one sample per interval, and the events
// its detectors raise. These are plain values: the sampler fills them from the machine, the
// detectors judge them, the log, CSV, exposition and terminal view render them.
//
// A quantity that could not be read is an empty optional: it is left out of the log, never
// written as 0 (the header lists why each one was missing at the first sample).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sparkdoc::watch {

// Cumulative nanoseconds since the driver loaded during which each policy or event held the
// clocks down (NVML field values). The first eight are the performance-policy counters (ids
// 74-81, the figures of nvmlDeviceGetViolationStatus); the last three are the R575+ clock-event
// counters (ids 269-271). low_util counts idle time and the two total_* count time below the
// application and base clocks for any reason.
struct ClockCounters {
  std::optional<uint64_t> power;
  std::optional<uint64_t> thermal;
  std::optional<uint64_t> sync_boost;
  std::optional<uint64_t> board_limit;
  std::optional<uint64_t> low_util;
  std::optional<uint64_t> reliability;
  std::optional<uint64_t> total_app_clocks;
  std::optional<uint64_t> total_base_clocks;
  std::optional<uint64_t> sw_thermal;
  std::optional<uint64_t> hw_thermal;
  std::optional<uint64_t> hw_power_brake;
  // The sampler reads the counters together, every few seconds: a sample without them is
  // empty here.
  bool empty() const {
    return !power && !thermal && !sync_boost && !board_limit && !low_util && !reliability &&
           !total_app_clocks && !total_base_clocks && !sw_thermal && !hw_thermal &&
           !hw_power_brake;
  }
  bool operator==(const ClockCounters&) const = default;
};

// One process NVML lists on a GPU. The name is /proc/PID/comm, absent when this PID names
// nothing here (a container without --pid=host sees host PIDs it cannot resolve).
struct GpuProcessUse {
  uint32_t pid = 0;
  std::optional<std::string> name;
  std::optional<uint64_t> used_bytes;
  bool operator==(const GpuProcessUse&) const = default;
};

struct GpuSample {
  unsigned index = 0;
  std::optional<double> power_w;
  std::optional<unsigned> temp_c;
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<unsigned> util_pct;
  std::optional<uint64_t> mem_used_bytes;       // NVML framebuffer used; absent on GB10
  std::optional<uint64_t> clock_event_reasons;  // gpu::kReason* bits
  std::optional<uint64_t> energy_mj;            // consumed since the driver loaded
  ClockCounters counters;
  std::optional<std::vector<GpuProcessUse>> processes;  // absent: the list could not be read
  bool operator==(const GpuSample&) const = default;
};

// The host's memory as /proc/meminfo and /proc/pressure/memory show it. On DGX Spark this is
// also the GPU's memory.
struct HostMemory {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> cached_bytes;  // Cached: the page cache, shmem included
  std::optional<uint64_t> buffers_bytes;
  std::optional<uint64_t> shmem_bytes;
  std::optional<uint64_t> anon_bytes;
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_used_bytes;
  std::optional<double> psi_some_avg10;  // percent of the last 10 s
  std::optional<double> psi_full_avg10;
  bool operator==(const HostMemory&) const = default;
};

struct Sample {
  double ts = 0;  // Unix time, seconds, millisecond resolution
  std::vector<GpuSample> gpus;
  HostMemory mem;
  bool operator==(const Sample&) const = default;
};

// A quantity that could not be read at the first sample, and why ("not supported:
// NVML_ERROR_NOT_SUPPORTED (3)"). gpu is absent for host quantities.
struct Unavailable {
  std::optional<unsigned> gpu;
  std::string field;  // the sample key: "mem_used_bytes", "clock_event_counters_ns.thermal"
  std::string reason;
  bool operator==(const Unavailable&) const = default;
};

struct GpuInfo {
  unsigned index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<double> power_limit_w;  // enforced limit; absent on GB10
  bool operator==(const GpuInfo&) const = default;
};

struct Header {
  std::string sparkdoc_version;
  double started_ts = 0;
  double interval_s = 1;
  std::string host;
  std::string platform = "other";    // "dgx-spark" or "other"
  std::string platform_description;  // "DGX Spark (NVIDIA GB10, compute capability 12.1, ...)"
  bool unified_memory = false;       // the GPU allocates from host memory (GB10 and others)
  std::optional<std::string> driver_version;
  std::vector<GpuInfo> gpus;
  std::vector<Unavailable> unavailable;
  bool operator==(const Header&) const = default;
};

enum class Severity { kInfo, kWarn };

struct Event {
  double ts = 0;
  std::string kind;  // one of the k*Kind names in detectors.h
  Severity severity = Severity::kInfo;
  std::optional<unsigned> gpu;  // absent for host events
  std::string message;          // what happened and what to do
  size_t sample = 0;            // index of the sample that raised it, from 0
  std::optional<uint32_t> pid;  // the process, for process events
  bool operator==(const Event&) const = default;
};

}  // namespace sparkdoc::watch
