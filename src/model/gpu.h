// Readings of the GPU through NVML and the CUDA driver API (both loaded with dlopen).
// GB10 answers NOT_SUPPORTED for framebuffer memory and power limits: those are Readings
// whose reason says so, never zeros.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"

namespace sparkdoc::gpu {

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  bool operator==(const ComputeCapability&) const = default;
};

struct MemoryInfo {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
  bool operator==(const MemoryInfo&) const = default;
};

// One process NVML lists on a device. PIDs are host PIDs: inside a container without
// --pid=host they may name nothing here.
struct GpuProcess {
  uint32_t pid = 0;
  std::string type;              // "compute" or "graphics"
  Reading<uint64_t> used_bytes;  // NVML_VALUE_NOT_AVAILABLE becomes not_supported
  bool operator==(const GpuProcess&) const = default;
};

// Cumulative time spent in each slowdown since driver load, nanoseconds (NVML field values
// 74, 76 and 269-271 on R580+; 251-253 for the last three on R575-R579). GB10 often reads the
// instantaneous reasons as 0 while capped; deltas of these counters tell the truth.
struct ClockEventCounters {
  Reading<uint64_t> sw_power_cap_ns;
  Reading<uint64_t> sync_boost_ns;
  Reading<uint64_t> sw_thermal_ns;
  Reading<uint64_t> hw_thermal_ns;
  Reading<uint64_t> hw_power_brake_ns;
  bool operator==(const ClockEventCounters&) const = default;
};

// Clock-event ("throttle") reason bits, as nvmlClocksEventReason*.
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClocks = 0x100;

struct Device {
  unsigned index = 0;
  Reading<std::string> name;
  Reading<std::string> uuid;
  Reading<std::string> pci_bus_id;
  Reading<std::string> bus_type;  // "pcie", "pci", "fpci", "agp", "unknown", "unknown (N)"
  Reading<ComputeCapability> compute_capability;
  Reading<MemoryInfo> memory;  // not_supported on GB10 (no dedicated framebuffer)
  Reading<unsigned> temperature_c;
  Reading<unsigned> power_usage_mw;
  Reading<unsigned> power_limit_mw;  // enforced limit
  Reading<unsigned> power_default_limit_mw;
  Reading<unsigned> power_max_limit_mw;  // upper constraint
  Reading<unsigned> sm_clock_mhz;
  Reading<unsigned> mem_clock_mhz;
  Reading<unsigned> max_sm_clock_mhz;
  Reading<unsigned> utilization_pct;
  Reading<unsigned> pstate;               // 0 = P0 ... 15
  Reading<uint64_t> clock_event_reasons;  // bit set of kReason*
  ClockEventCounters clock_event_counters;
  Reading<std::vector<GpuProcess>> processes;
  bool operator==(const Device&) const = default;
};

struct NvmlReadings {
  std::string library;                  // path or soname that was loaded
  Reading<std::string> driver_version;  // "580.95.05"
  Reading<int> cuda_driver_version;     // 13000 for 13.0 (major*1000 + minor*10)
  Reading<std::string> nvml_version;
  std::vector<Device> devices;
  bool operator==(const NvmlReadings&) const = default;
};

// What the CUDA driver API says without creating a context.
struct CudaDevice {
  int ordinal = 0;
  Reading<std::string> name;
  Reading<ComputeCapability> compute_capability;
  Reading<uint64_t> total_memory_bytes;  // cuDeviceTotalMem
  Reading<bool> integrated;              // CU_DEVICE_ATTRIBUTE_INTEGRATED: shares host memory
  Reading<bool> pageable_memory_access;  // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS
  Reading<int> multiprocessors;
  bool operator==(const CudaDevice&) const = default;
};

struct CudaReadings {
  std::string library;
  Reading<int> driver_version;            // cuDriverGetVersion: 13000 for 13.0
  std::vector<CudaDevice> devices;        // empty with a reason in init_error when cuInit
                                          // (or cuDeviceGetCount) fails
  std::optional<std::string> init_error;  // "CUDA_ERROR_NO_DEVICE: no CUDA-capable device ..."
  // Set when cuInit was not called on purpose (a check whose questions NVML answered: cuInit
  // costs about 0.2 s and 20 MB of resident memory); devices is then empty.
  std::optional<std::string> devices_not_read;
  bool operator==(const CudaReadings&) const = default;
};

struct GpuReadings {
  Reading<NvmlReadings> nvml;
  Reading<CudaReadings> cuda;
  bool operator==(const GpuReadings&) const = default;
};

}  // namespace sparkdoc::gpu
