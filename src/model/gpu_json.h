// JSON field lists of the GPU readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/gpu.h"

namespace sparkdoc::gpu {

SPARKDOC_JSON(ComputeCapability, major, minor)
SPARKDOC_JSON(MemoryInfo, total_bytes, free_bytes, used_bytes)
SPARKDOC_JSON(GpuProcess, pid, type, used_bytes)
SPARKDOC_JSON(ClockEventCounters, sw_power_cap_ns, sync_boost_ns, sw_thermal_ns, hw_thermal_ns,
              hw_power_brake_ns)
SPARKDOC_JSON(Device, index, name, uuid, pci_bus_id, bus_type, compute_capability, memory,
              temperature_c, power_usage_mw, power_limit_mw, power_default_limit_mw,
              power_max_limit_mw, sm_clock_mhz, mem_clock_mhz, max_sm_clock_mhz, utilization_pct,
              pstate, clock_event_reasons, clock_event_counters, processes)
SPARKDOC_JSON(NvmlReadings, library, driver_version, cuda_driver_version, nvml_version, devices)
SPARKDOC_JSON(CudaDevice, ordinal, name, compute_capability, total_memory_bytes, integrated,
              pageable_memory_access, multiprocessors)
SPARKDOC_JSON(CudaReadings, library, driver_version, devices, init_error, devices_not_read)
SPARKDOC_JSON(GpuReadings, nvml, cuda)

}  // namespace sparkdoc::gpu
