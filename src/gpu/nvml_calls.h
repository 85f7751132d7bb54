// Calls into a loaded NVML that turn its status codes into Readings, shared by the one-shot probe
// (probe.cpp) and the telemetry session (telemetry.cpp). Internal to the gpu component: callers
// outside it use probe.h and telemetry.h.
// Preconditions: nvmlInit has succeeded and not been shut down; handles come from this library.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"
#include "core/result.h"
#include "gpu/nvml_api.h"
#include "model/gpu.h"

namespace sparkdoc::gpu {

inline Missing missing_from(const Error& error) { return Missing{error.why, error.message}; }

// Calls an NVML entry point; a failure, or an entry point the library lacks, becomes an Error.
template <class Sig, class... Args>
Result<void> nvml_call(const Nvml& nvml, const Symbol<Sig>& fn, Args... args) {
  if (!fn) return fail(Why::kNotSupported, fn.missing());
  nvml::nvmlReturn_t code = fn(args...);
  if (code != nvml::NVML_SUCCESS) return tl::unexpected<Error>(nvml.error(code, fn.name()));
  return {};
}

// The value an NVML entry point writes through its last parameter.
template <class Out, class Sig, class... Args>
Reading<Out> nvml_query(const Nvml& nvml, const Symbol<Sig>& fn, Args... args) {
  Out out{};
  auto status = nvml_call(nvml, fn, args..., &out);
  if (!status) return missing_from(status.error());
  return out;
}

// nvmlDeviceGetMemoryInfo_v2, else v1. Not supported on GB10 (no dedicated framebuffer).
Reading<MemoryInfo> read_memory(const Nvml& nvml, nvml::nvmlDevice_t device);

// Compute processes, then graphics processes, of one device.
Reading<std::vector<GpuProcess>> read_processes(const Nvml& nvml, nvml::nvmlDevice_t device);

// One answer of nvmlDeviceGetFieldValues as an unsigned count, or why it has none.
Reading<uint64_t> field_value(const Nvml& nvml, const nvml::nvmlFieldValue_t& field);

// One nvmlDeviceGetFieldValues call for `ids`; a failure of the whole call fills every slot.
template <size_t kCount>
std::array<Reading<uint64_t>, kCount> read_fields(const Nvml& nvml, nvml::nvmlDevice_t device,
                                                  const std::array<unsigned, kCount>& ids) {
  std::array<nvml::nvmlFieldValue_t, kCount> fields{};
  for (size_t i = 0; i < kCount; ++i) fields[i].fieldId = ids[i];
  auto status = nvml_call(nvml, nvml.api().device_get_field_values, device,
                          static_cast<int>(kCount), fields.data());
  std::array<Reading<uint64_t>, kCount> values;
  for (size_t i = 0; i < kCount; ++i) {
    values[i] = status ? field_value(nvml, fields[i]) : missing_from(status.error());
  }
  return values;
}

// The driver branch, 580 for "580.95.05"; nullopt when the version is unknown.
std::optional<int> driver_branch(const Reading<std::string>& driver_version);

// The SW thermal, HW thermal and HW power-brake counters as read at the R580 ids (269-271).
// R575-R579 numbered them 251-253; from R580 on those ids are power-smoothing fields that can
// succeed with unrelated values, so when none of the three was read and the branch is older
// than 580, they are read again at the older ids.
void fall_back_to_r575_counter_ids(const Nvml& nvml, nvml::nvmlDevice_t device,
                                   std::optional<int> branch, Reading<uint64_t>& sw_thermal_ns,
                                   Reading<uint64_t>& hw_thermal_ns,
                                   Reading<uint64_t>& hw_power_brake_ns);

}  // namespace sparkdoc::gpu
