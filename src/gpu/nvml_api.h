// NVML loaded with dlopen: the one list of entry points sparkdoc calls, and the loader.
//
// The library is libnvidia-ml.so.1, or the file named by SPARKDOC_NVML_LIBRARY (tests point it
// at an in-tree fake; odd installs at their copy). It is loaded once per process and never
// closed. A required entry point that is missing makes the library unusable; a missing optional
// one is a capability gap that the probe records as not_supported with the Symbol's text.
// Threading: NVML is thread-safe, and an Nvml is immutable after load.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "gpu/dynamic_library.h"
#include "gpu/nvml_types.h"

namespace sparkdoc::gpu {

// X(need, return type, member, (parameter types), exported names, newest version first).
// Names in one row share the signature; a version that changed its argument type
// (nvmlDeviceGetMemoryInfo_v2 takes nvmlMemory_v2_t) is a row of its own, and the probe chooses.
#define SPARKDOC_NVML_ENTRY_POINTS(X)                                                              \
  X(kRequired, nvml::nvmlReturn_t, init, (), "nvmlInit_v2", "nvmlInit")                            \
  X(kRequired, nvml::nvmlReturn_t, shutdown, (), "nvmlShutdown")                                   \
  X(kOptional, const char*, error_string, (nvml::nvmlReturn_t), "nvmlErrorString")                 \
  X(kOptional, nvml::nvmlReturn_t, system_get_driver_version, (char*, unsigned),                  \
    "nvmlSystemGetDriverVersion")                                                                  \
  X(kOptional, nvml::nvmlReturn_t, system_get_nvml_version, (char*, unsigned),                    \
    "nvmlSystemGetNVMLVersion")                                                                    \
  X(kOptional, nvml::nvmlReturn_t, system_get_cuda_driver_version, (int*),                        \
    "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")                         \
  X(kRequired, nvml::nvmlReturn_t, device_get_count, (unsigned*), "nvmlDeviceGetCount_v2",         \
    "nvmlDeviceGetCount")                                                                          \
  X(kRequired, nvml::nvmlReturn_t, device_get_handle_by_index,                                     \
    (unsigned, nvml::nvmlDevice_t*), "nvmlDeviceGetHandleByIndex_v2",                              \
    "nvmlDeviceGetHandleByIndex")                                                                  \
  X(kOptional, nvml::nvmlReturn_t, device_get_name, (nvml::nvmlDevice_t, char*, unsigned),        \
    "nvmlDeviceGetName")                                                                           \
  X(kOptional, nvml::nvmlReturn_t, device_get_uuid, (nvml::nvmlDevice_t, char*, unsigned),        \
    "nvmlDeviceGetUUID")                                                                           \
  X(kOptional, nvml::nvmlReturn_t, device_get_pci_info,                                            \
    (nvml::nvmlDevice_t, nvml::nvmlPciInfo_t*), "nvmlDeviceGetPciInfo_v3")                         \
  X(kOptional, nvml::nvmlReturn_t, device_get_bus_type,                                            \
    (nvml::nvmlDevice_t, nvml::nvmlBusType_t*), "nvmlDeviceGetBusType")                            \
  X(kOptional, nvml::nvmlReturn_t, device_get_cuda_compute_capability,                             \
    (nvml::nvmlDevice_t, int*, int*), "nvmlDeviceGetCudaComputeCapability")                        \
  X(kOptional, nvml::nvmlReturn_t, device_get_memory_info_v2,                                      \
    (nvml::nvmlDevice_t, nvml::nvmlMemory_v2_t*), "nvmlDeviceGetMemoryInfo_v2")                    \
  X(kOptional, nvml::nvmlReturn_t, device_get_memory_info,                                         \
    (nvml::nvmlDevice_t, nvml::nvmlMemory_t*), "nvmlDeviceGetMemoryInfo")                          \
  X(kOptional, nvml::nvmlReturn_t, device_get_temperature,                                         \
    (nvml::nvmlDevice_t, nvml::nvmlTemperatureSensors_t, unsigned*), "nvmlDeviceGetTemperature")   \
  X(kOptional, nvml::nvmlReturn_t, device_get_power_usage, (nvml::nvmlDevice_t, unsigned*),       \
    "nvmlDeviceGetPowerUsage")                                                                     \
  X(kOptional, nvml::nvmlReturn_t, device_get_enforced_power_limit,                                \
    (nvml::nvmlDevice_t, unsigned*), "nvmlDeviceGetEnforcedPowerLimit")                            \
  X(kOptional, nvml::nvmlReturn_t, device_get_power_management_default_limit,                      \
    (nvml::nvmlDevice_t, unsigned*), "nvmlDeviceGetPowerManagementDefaultLimit")                   \
  X(kOptional, nvml::nvmlReturn_t, device_get_power_management_limit_constraints,                  \
    (nvml::nvmlDevice_t, unsigned*, unsigned*), "nvmlDeviceGetPowerManagementLimitConstraints")    \
  X(kOptional, nvml::nvmlReturn_t, device_get_clock_info,                                          \
    (nvml::nvmlDevice_t, nvml::nvmlClockType_t, unsigned*), "nvmlDeviceGetClockInfo")              \
  X(kOptional, nvml::nvmlReturn_t, device_get_max_clock_info,                                      \
    (nvml::nvmlDevice_t, nvml::nvmlClockType_t, unsigned*), "nvmlDeviceGetMaxClockInfo")           \
  X(kOptional, nvml::nvmlReturn_t, device_get_utilization_rates,                                   \
    (nvml::nvmlDevice_t, nvml::nvmlUtilization_t*), "nvmlDeviceGetUtilizationRates")              \
  X(kOptional, nvml::nvmlReturn_t, device_get_performance_state,                                   \
    (nvml::nvmlDevice_t, nvml::nvmlPstates_t*), "nvmlDeviceGetPerformanceState")                   \
  X(kOptional, nvml::nvmlReturn_t, device_get_current_clocks_event_reasons,                        \
    (nvml::nvmlDevice_t, unsigned long long*), "nvmlDeviceGetCurrentClocksEventReasons",           \
    "nvmlDeviceGetCurrentClocksThrottleReasons")                                                   \
  X(kOptional, nvml::nvmlReturn_t, device_get_field_values,                                        \
    (nvml::nvmlDevice_t, int, nvml::nvmlFieldValue_t*), "nvmlDeviceGetFieldValues")                \
  X(kOptional, nvml::nvmlReturn_t, device_get_compute_running_processes,                           \
    (nvml::nvmlDevice_t, unsigned*, nvml::nvmlProcessInfo_t*),                                     \
    "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2")          \
  X(kOptional, nvml::nvmlReturn_t, device_get_graphics_running_processes,                          \
    (nvml::nvmlDevice_t, unsigned*, nvml::nvmlProcessInfo_t*),                                     \
    "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2")        \
  X(kOptional, nvml::nvmlReturn_t, device_set_gpu_locked_clocks,                                   \
    (nvml::nvmlDevice_t, unsigned, unsigned), "nvmlDeviceSetGpuLockedClocks")                      \
  X(kOptional, nvml::nvmlReturn_t, device_reset_gpu_locked_clocks, (nvml::nvmlDevice_t),           \
    "nvmlDeviceResetGpuLockedClocks")

struct NvmlEntryPoints {
#define SPARKDOC_NVML_MEMBER(need, ret, member, params, ...) Symbol<ret params> member;
  SPARKDOC_NVML_ENTRY_POINTS(SPARKDOC_NVML_MEMBER)
#undef SPARKDOC_NVML_MEMBER
};

class Nvml {
 public:
  static constexpr const char* kSoname = "libnvidia-ml.so.1";
  static constexpr const char* kLibraryEnv = "SPARKDOC_NVML_LIBRARY";

  // Opens `name` (a soname or a path) and binds the table. Absent when the file is not there,
  // with "libnvidia-ml.so.1 not found: no NVIDIA driver installed ..." for the soname.
  // The library stays mapped for the life of the process, whatever becomes of the result,
  // unless unload() is called.
  static Result<Nvml> load(const std::string& name);
  // The process-wide instance: SPARKDOC_NVML_LIBRARY or the soname, loaded on first use.
  static const Result<Nvml>& instance();

  const NvmlEntryPoints& api() const { return api_; }
  // The file that was loaded.
  const std::string& library() const { return library_; }

  // The failure `function` reported with `code`: Why per nvml_why, and a message naming the
  // function, the code's constant and number, and nvmlErrorString's text.
  Error error(nvml::nvmlReturn_t code, std::string_view function) const;

  // Closes this load of the library (DynamicLibrary::close's rules: every nvmlInit matched by
  // nvmlShutdown, and every thread that called NVML exited) and unbinds the table. NVML keeps
  // 14 MB of its own (.bss that nvmlInit fills, on driver 580) until the library goes; a
  // short command that has read what it needs gives it back. Never for instance().
  void unload();

 private:
  NvmlEntryPoints api_;
  std::string library_;
  DynamicLibrary handle_;
};

// NOT_SUPPORTED and FUNCTION_NOT_FOUND → kNotSupported, NO_PERMISSION → kNoPermission,
// LIBRARY_NOT_FOUND and DRIVER_NOT_LOADED → kAbsent, anything else → kError.
Why nvml_why(nvml::nvmlReturn_t code);
// "NVML_ERROR_NOT_SUPPORTED"; empty for a code the mirror does not list.
std::string_view nvml_return_name(nvml::nvmlReturn_t code);

}  // namespace sparkdoc::gpu
