#include "gpu/telemetry.h"

#include <algorithm>
#include <array>
#include <utility>

#include "gpu/nvml_calls.h"

namespace sparkdoc::gpu {

using namespace nvml;

namespace {

// The policy counters (74-81) and the R580 clock-event counters (269-271), in PolicyCounters
// order, then SW thermal, HW thermal, HW power brake.
constexpr std::array<unsigned, 11> kCounterFields = {
    NVML_FI_DEV_PERF_POLICY_POWER,
    NVML_FI_DEV_PERF_POLICY_THERMAL,
    NVML_FI_DEV_PERF_POLICY_SYNC_BOOST,
    NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT,
    NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION,
    NVML_FI_DEV_PERF_POLICY_RELIABILITY,
    NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS,
    NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS,
    NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
    NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
    NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
};

const Missing kNotRead{Why::kAbsent, "not read in this sample"};

}  // namespace

Result<NvmlSession> NvmlSession::open(const Nvml& nvml) {
  const NvmlEntryPoints& api = nvml.api();
  if (auto init = nvml_call(nvml, api.init); !init) return tl::unexpected(init.error());
  NvmlSession session;
  session.nvml_ = &nvml;  // from here on the destructor shuts NVML down
  std::array<char, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE> version{};
  if (nvml_call(nvml, api.system_get_driver_version, version.data(),
                static_cast<unsigned>(version.size()))) {
    version.back() = '\0';
    session.branch_ = driver_branch(std::string(version.data()));
  }
  auto count = nvml_query<unsigned>(nvml, api.device_get_count);
  if (!count) return fail(count.missing().why, count.missing().detail);
  for (unsigned index = 0; index < *count; ++index) {
    session.handles_.push_back(
        nvml_query<nvmlDevice_t>(nvml, api.device_get_handle_by_index, index));
  }
  session.unsupported_.resize(session.handles_.size());
  return session;
}

NvmlSession::NvmlSession(NvmlSession&& other) noexcept
    : nvml_(std::exchange(other.nvml_, nullptr)),
      handles_(std::move(other.handles_)),
      unsupported_(std::move(other.unsupported_)),
      branch_(other.branch_) {}

NvmlSession& NvmlSession::operator=(NvmlSession&& other) noexcept {
  if (this != &other) {
    close();
    nvml_ = std::exchange(other.nvml_, nullptr);
    handles_ = std::move(other.handles_);
    unsupported_ = std::move(other.unsupported_);
    branch_ = other.branch_;
  }
  return *this;
}

NvmlSession::~NvmlSession() {
  close();
}

void NvmlSession::close() {
  if (nvml_ != nullptr) nvml_->api().shutdown();
  nvml_ = nullptr;
}

template <class T, class Read>
Reading<T> NvmlSession::ask(size_t index, Query query, Read read) {
  std::optional<Missing>& known = unsupported_.at(index)[query];
  if (known) return *known;
  Reading<T> reading = read();
  if (!reading && reading.missing().why == Why::kNotSupported) known = reading.missing();
  return reading;
}

DeviceTelemetry NvmlSession::read(size_t index, ReadSet parts) {
  DeviceTelemetry t;
  t.index = static_cast<unsigned>(index);
  const Reading<nvmlDevice_t>& handle = handles_.at(index);
  if (!handle) {
    const Missing& why = handle.missing();
    t.power_usage_mw = t.temperature_c = t.sm_clock_mhz = t.mem_clock_mhz = t.utilization_pct = why;
    t.memory = why;
    t.clock_event_reasons = t.sw_thermal_ns = t.hw_thermal_ns = t.hw_power_brake_ns =
        t.total_energy_mj = why;
    t.policy = PolicyCounters{why, why, why, why, why, why, why, why};
    t.processes = why;
    return t;
  }
  const Nvml& nvml = *nvml_;
  const NvmlEntryPoints& api = nvml.api();
  nvmlDevice_t device = *handle;
  t.power_usage_mw = ask<unsigned>(index, kPower, [&] {
    return nvml_query<unsigned>(nvml, api.device_get_power_usage, device);
  });
  t.temperature_c = ask<unsigned>(index, kTemperature, [&] {
    return nvml_query<unsigned>(nvml, api.device_get_temperature, device, NVML_TEMPERATURE_GPU);
  });
  t.sm_clock_mhz = ask<unsigned>(index, kSmClock, [&] {
    return nvml_query<unsigned>(nvml, api.device_get_clock_info, device, NVML_CLOCK_SM);
  });
  t.mem_clock_mhz = ask<unsigned>(index, kMemClock, [&] {
    return nvml_query<unsigned>(nvml, api.device_get_clock_info, device, NVML_CLOCK_MEM);
  });
  t.utilization_pct = ask<unsigned>(index, kUtilization, [&]() -> Reading<unsigned> {
    auto rates = nvml_query<nvmlUtilization_t>(nvml, api.device_get_utilization_rates, device);
    if (!rates) return rates.missing();
    return rates->gpu;
  });
  t.memory = ask<MemoryInfo>(index, kMemory, [&] { return read_memory(nvml, device); });
  t.clock_event_reasons = ask<uint64_t>(index, kReasons, [&]() -> Reading<uint64_t> {
    auto reasons =
        nvml_query<unsigned long long>(nvml, api.device_get_current_clocks_event_reasons, device);
    if (!reasons) return reasons.missing();
    return uint64_t{*reasons};
  });

  // One field query for what `parts` asks of the eight policy counters, the three R580
  // clock-event counters and the energy counter.
  if (parts.counters) {
    std::array<unsigned, 12> ids{};
    std::copy(kCounterFields.begin(), kCounterFields.end(), ids.begin());
    ids[11] = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION;
    std::array<Reading<uint64_t>, 12> fields;
    if (parts.energy) {
      fields = read_fields<12>(nvml, device, ids);
    } else {
      auto counters = read_fields<11>(nvml, device, kCounterFields);
      std::copy(counters.begin(), counters.end(), fields.begin());
      fields[11] = kNotRead;
    }
    t.policy = PolicyCounters{fields[0], fields[1], fields[2], fields[3],
                              fields[4], fields[5], fields[6], fields[7]};
    t.sw_thermal_ns = fields[8];
    t.hw_thermal_ns = fields[9];
    t.hw_power_brake_ns = fields[10];
    t.total_energy_mj = fields[11];
    fall_back_to_r575_counter_ids(nvml, device, branch_, t.sw_thermal_ns, t.hw_thermal_ns,
                                  t.hw_power_brake_ns);
  } else {
    t.policy = PolicyCounters{kNotRead, kNotRead, kNotRead, kNotRead,
                              kNotRead, kNotRead, kNotRead, kNotRead};
    t.sw_thermal_ns = t.hw_thermal_ns = t.hw_power_brake_ns = kNotRead;
    t.total_energy_mj = parts.energy
                            ? read_fields<1>(nvml, device, {NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION})[0]
                            : Reading<uint64_t>(kNotRead);
  }
  t.processes =
      ask<std::vector<GpuProcess>>(index, kProcesses, [&] { return read_processes(nvml, device); });
  return t;
}

}  // namespace sparkdoc::gpu
