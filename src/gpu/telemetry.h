// Repeated readings of what changes on a GPU (power, temperature, clocks, utilisation, memory,
// clock-event reasons and counters, processes), for a sampler that asks every second or so.
//
// Unlike read_nvml (probe.h), which initialises NVML, reads everything and shuts it down, a
// session initialises NVML once, keeps the device handles, and per reading asks only the
// quantities below: about a dozen NVML calls per device, no dlopen, no /proc scan.
// Threading: one session is used from one thread at a time; NVML itself is thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "core/reading.h"
#include "core/result.h"
#include "gpu/nvml_api.h"
#include "model/gpu.h"

namespace sparkdoc::gpu {

// NVML's performance-policy counters (field ids 74-81): cumulative nanoseconds since the
// driver loaded during which each policy held the clocks down. low_utilization counts idle
// time; total_app_clocks and total_base_clocks count time below the application and base
// clocks for any reason.
struct PolicyCounters {
  Reading<uint64_t> power_ns;
  Reading<uint64_t> thermal_ns;
  Reading<uint64_t> sync_boost_ns;
  Reading<uint64_t> board_limit_ns;
  Reading<uint64_t> low_utilization_ns;
  Reading<uint64_t> reliability_ns;
  Reading<uint64_t> total_app_clocks_ns;
  Reading<uint64_t> total_base_clocks_ns;
  bool operator==(const PolicyCounters&) const = default;
};

struct DeviceTelemetry {
  unsigned index = 0;
  Reading<unsigned> power_usage_mw;
  Reading<unsigned> temperature_c;
  Reading<unsigned> sm_clock_mhz;
  Reading<unsigned> mem_clock_mhz;  // not supported on GB10 (the SoC owns it)
  Reading<unsigned> utilization_pct;
  Reading<MemoryInfo> memory;             // not supported on GB10
  Reading<uint64_t> clock_event_reasons;  // kReason* bits; GB10 often reads 0 while capped
  PolicyCounters policy;
  // The clock-event counters of R575+ (ids 269-271, or 251-253 before R580), nanoseconds.
  Reading<uint64_t> sw_thermal_ns;
  Reading<uint64_t> hw_thermal_ns;
  Reading<uint64_t> hw_power_brake_ns;
  Reading<uint64_t> total_energy_mj;  // since the driver loaded (field 83)
  Reading<std::vector<GpuProcess>> processes;
  bool operator==(const DeviceTelemetry&) const = default;
};

// The costly parts of a reading, which a sampler may take less often than the rest. On an H200
// (R580) one nvmlDeviceGetFieldValues call for the eleven counters costs about 0.9 ms of CPU
// and the energy field about 5.3 ms, against 10-15 us for each other query
// (bench/watch_sample_cost). A part not asked for reads as absent, "not read in this sample".
struct ReadSet {
  bool counters = true;  // PolicyCounters and the three clock-event counters
  bool energy = true;    // total_energy_mj
};

class NvmlSession {
 public:
  // nvmlInit, the driver branch (for the counter ids), the device count and one handle per
  // device. Fails when nvmlInit or the count fails; a device whose handle NVML refuses is kept
  // and every reading of it carries that reason. `nvml` must outlive the session.
  static Result<NvmlSession> open(const Nvml& nvml);

  NvmlSession(NvmlSession&& other) noexcept;
  NvmlSession& operator=(NvmlSession&& other) noexcept;
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  ~NvmlSession();  // nvmlShutdown, matching the nvmlInit of open

  size_t device_count() const { return handles_.size(); }
  // The quantities above for device `index` (< device_count()). Power is read first. A
  // quantity the device once answered NOT_SUPPORTED for is not asked again (support does not
  // change while the driver is loaded; GB10 refuses its memory figures and memory clock).
  DeviceTelemetry read(size_t index, ReadSet parts = {});

 private:
  // The single-valued queries, for remembering which ones a device does not support.
  enum Query : size_t {
    kPower,
    kTemperature,
    kSmClock,
    kMemClock,
    kUtilization,
    kMemory,
    kReasons,
    kProcesses,
    kQueryCount
  };
  using Unsupported = std::array<std::optional<Missing>, kQueryCount>;

  NvmlSession() = default;
  void close();
  // `read()`, unless the device already answered NOT_SUPPORTED for `query`.
  template <class T, class Read>
  Reading<T> ask(size_t index, Query query, Read read);

  const Nvml* nvml_ = nullptr;
  std::vector<Reading<nvml::nvmlDevice_t>> handles_;
  std::vector<Unsupported> unsupported_;
  std::optional<int> branch_;
};

}  // namespace sparkdoc::gpu
