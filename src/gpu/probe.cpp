#include "gpu/probe.h"

#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/nvml_calls.h"

namespace sparkdoc::gpu {
namespace {

using namespace nvml;
using cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
using cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
using cuda::CU_DEVICE_ATTRIBUTE_INTEGRATED;
using cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
using cuda::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS;
using cuda::CUDA_SUCCESS;
using cuda::CUdevice;
using cuda::CUdevice_attribute;
using cuda::CUresult;

// The text an NVML entry point writes into a caller's buffer of `kSize` bytes.
template <unsigned kSize, class Sig, class... Args>
Reading<std::string> nvml_string(const Nvml& nvml, const Symbol<Sig>& fn, Args... args) {
  std::array<char, kSize> buffer{};
  auto status = nvml_call(nvml, fn, args..., buffer.data(), kSize);
  if (!status) return missing_from(status.error());
  buffer.back() = '\0';
  return std::string(buffer.data());
}

ClockEventCounters read_counters(const Nvml& nvml, nvmlDevice_t device,
                                 std::optional<int> branch) {
  // Cumulative time in each slowdown since the driver loaded. NVML's violation times are
  // nanoseconds (nvmlViolationTime_t.violationTime; on an idle H200, field 78 and
  // nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_LOW_UTILIZATION) both read about 4.0e10), and
  // nvidia-smi divides by 1000 to print "us"; the raw value is kept, unscaled.
  auto current = read_fields<5>(nvml, device,
                                {NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP,
                                 NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST,
                                 NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
                                 NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
                                 NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN});
  ClockEventCounters counters{current[0], current[1], current[2], current[3], current[4]};
  fall_back_to_r575_counter_ids(nvml, device, branch, counters.sw_thermal_ns,
                                counters.hw_thermal_ns, counters.hw_power_brake_ns);
  return counters;
}

Device read_device(const Nvml& nvml, unsigned index, nvmlDevice_t device,
                   std::optional<int> branch) {
  const NvmlEntryPoints& api = nvml.api();
  Device d;
  d.index = index;
  d.name = nvml_string<NVML_DEVICE_NAME_V2_BUFFER_SIZE>(nvml, api.device_get_name, device);
  d.uuid = nvml_string<NVML_DEVICE_UUID_V2_BUFFER_SIZE>(nvml, api.device_get_uuid, device);

  auto pci = nvml_query<nvmlPciInfo_t>(nvml, api.device_get_pci_info, device);
  if (pci) {
    pci->busId[sizeof(pci->busId) - 1] = '\0';
    d.pci_bus_id = std::string(pci->busId);
  } else {
    d.pci_bus_id = pci.missing();
  }
  auto bus_type = nvml_query<nvmlBusType_t>(nvml, api.device_get_bus_type, device);
  d.bus_type = bus_type ? Reading<std::string>(bus_type_name(*bus_type))
                        : Reading<std::string>(bus_type.missing());

  int major = 0;
  int minor = 0;
  auto cc = nvml_call(nvml, api.device_get_cuda_compute_capability, device, &major, &minor);
  d.compute_capability = cc ? Reading<ComputeCapability>(ComputeCapability{major, minor})
                            : Reading<ComputeCapability>(missing_from(cc.error()));

  d.memory = read_memory(nvml, device);
  d.temperature_c =
      nvml_query<unsigned>(nvml, api.device_get_temperature, device, NVML_TEMPERATURE_GPU);
  d.power_usage_mw = nvml_query<unsigned>(nvml, api.device_get_power_usage, device);
  d.power_limit_mw = nvml_query<unsigned>(nvml, api.device_get_enforced_power_limit, device);
  d.power_default_limit_mw =
      nvml_query<unsigned>(nvml, api.device_get_power_management_default_limit, device);

  unsigned min_limit_mw = 0;
  unsigned max_limit_mw = 0;
  auto constraints = nvml_call(nvml, api.device_get_power_management_limit_constraints, device,
                               &min_limit_mw, &max_limit_mw);
  d.power_max_limit_mw = constraints ? Reading<unsigned>(max_limit_mw)
                                     : Reading<unsigned>(missing_from(constraints.error()));

  d.sm_clock_mhz = nvml_query<unsigned>(nvml, api.device_get_clock_info, device, NVML_CLOCK_SM);
  d.mem_clock_mhz = nvml_query<unsigned>(nvml, api.device_get_clock_info, device, NVML_CLOCK_MEM);
  d.max_sm_clock_mhz =
      nvml_query<unsigned>(nvml, api.device_get_max_clock_info, device, NVML_CLOCK_SM);

  auto utilization = nvml_query<nvmlUtilization_t>(nvml, api.device_get_utilization_rates, device);
  d.utilization_pct = utilization ? Reading<unsigned>(utilization->gpu)
                                  : Reading<unsigned>(utilization.missing());

  auto pstate = nvml_query<nvmlPstates_t>(nvml, api.device_get_performance_state, device);
  if (!pstate) {
    d.pstate = pstate.missing();
  } else if (*pstate < NVML_PSTATE_0 || *pstate > NVML_PSTATE_15) {
    d.pstate = Missing{Why::kNotSupported, api.device_get_performance_state.name() + " answered " +
                                               std::to_string(static_cast<int>(*pstate)) +
                                               " (NVML_PSTATE_UNKNOWN is 32)"};
  } else {
    d.pstate = static_cast<unsigned>(*pstate);
  }

  auto reasons = nvml_query<unsigned long long>(
      nvml, api.device_get_current_clocks_event_reasons, device);
  d.clock_event_reasons = reasons ? Reading<uint64_t>(uint64_t{*reasons})
                                  : Reading<uint64_t>(reasons.missing());
  d.clock_event_counters = read_counters(nvml, device, branch);
  d.processes = read_processes(nvml, device);
  return d;
}

// A device whose handle NVML would not give: every reading carries that reason.
Device unreadable_device(unsigned index, const Missing& why) {
  Device d;
  d.index = index;
  d.name = why;
  d.uuid = why;
  d.pci_bus_id = why;
  d.bus_type = why;
  d.compute_capability = why;
  d.memory = why;
  d.temperature_c = why;
  d.power_usage_mw = why;
  d.power_limit_mw = why;
  d.power_default_limit_mw = why;
  d.power_max_limit_mw = why;
  d.sm_clock_mhz = why;
  d.mem_clock_mhz = why;
  d.max_sm_clock_mhz = why;
  d.utilization_pct = why;
  d.pstate = why;
  d.clock_event_reasons = why;
  d.clock_event_counters = ClockEventCounters{why, why, why, why, why};
  d.processes = why;
  return d;
}

Reading<int> cuda_attribute(const Cuda& cuda, CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  auto status = cuda_call(cuda, cuda.api().device_get_attribute, &value, attribute, device);
  if (!status) {
    status.error().message += " for attribute " + std::to_string(static_cast<int>(attribute));
    return missing_from(status.error());
  }
  return value;
}

Reading<bool> as_bool(const Reading<int>& reading) {
  if (!reading) return reading.missing();
  return *reading != 0;
}

CudaDevice read_cuda_device(const Cuda& cuda, int ordinal) {
  const CudaEntryPoints& api = cuda.api();
  CudaDevice d;
  d.ordinal = ordinal;
  CUdevice device = 0;
  auto got = cuda_call(cuda, api.device_get, &device, ordinal);
  if (!got) {
    Missing why = missing_from(got.error());
    d.name = why;
    d.compute_capability = why;
    d.total_memory_bytes = why;
    d.integrated = why;
    d.pageable_memory_access = why;
    d.multiprocessors = why;
    return d;
  }

  std::array<char, 256> name{};
  auto named = cuda_call(cuda, api.device_get_name, name.data(), static_cast<int>(name.size()),
                         device);
  name.back() = '\0';
  d.name = named ? Reading<std::string>(std::string(name.data()))
                 : Reading<std::string>(missing_from(named.error()));

  auto major = cuda_attribute(cuda, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  auto minor = cuda_attribute(cuda, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  if (!major) {
    d.compute_capability = major.missing();
  } else if (!minor) {
    d.compute_capability = minor.missing();
  } else {
    d.compute_capability = ComputeCapability{*major, *minor};
  }

  std::size_t total_bytes = 0;
  auto total = cuda_call(cuda, api.device_total_mem, &total_bytes, device);
  d.total_memory_bytes = total ? Reading<uint64_t>(uint64_t{total_bytes})
                               : Reading<uint64_t>(missing_from(total.error()));

  d.integrated = as_bool(cuda_attribute(cuda, device, CU_DEVICE_ATTRIBUTE_INTEGRATED));
  d.pageable_memory_access =
      as_bool(cuda_attribute(cuda, device, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS));
  d.multiprocessors = cuda_attribute(cuda, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  return d;
}

std::string internal_error(const char* what) {
  return std::string("internal error while reading the GPU: ") + what;
}

}  // namespace

std::string bus_type_name(nvmlBusType_t bus_type) {
  switch (bus_type) {
    case NVML_BUS_TYPE_UNKNOWN: return "unknown";
    case NVML_BUS_TYPE_PCI: return "pci";
    case NVML_BUS_TYPE_PCIE: return "pcie";
    case NVML_BUS_TYPE_FPCI: return "fpci";
    case NVML_BUS_TYPE_AGP: return "agp";
    default: return "unknown (" + std::to_string(bus_type) + ")";
  }
}

Reading<NvmlReadings> read_nvml(const Nvml& nvml) {
  try {
    const NvmlEntryPoints& api = nvml.api();
    if (auto init = nvml_call(nvml, api.init); !init) return missing_from(init.error());
    // Every successful nvmlInit is matched by one nvmlShutdown, also on the way out of an
    // exception; the readings are complete whatever shutdown answers.
    struct Shutdown {
      const NvmlEntryPoints& api;
      ~Shutdown() { api.shutdown(); }
    } shutdown{api};
    NvmlReadings out;
    out.library = nvml.library();
    out.driver_version = nvml_string<NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE>(
        nvml, api.system_get_driver_version);
    out.nvml_version =
        nvml_string<NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE>(nvml, api.system_get_nvml_version);
    out.cuda_driver_version = nvml_query<int>(nvml, api.system_get_cuda_driver_version);

    std::optional<int> branch = driver_branch(out.driver_version);
    auto count = nvml_query<unsigned>(nvml, api.device_get_count);
    if (!count) return count.missing();
    for (unsigned index = 0; index < *count; ++index) {
      auto device = nvml_query<nvmlDevice_t>(nvml, api.device_get_handle_by_index, index);
      out.devices.push_back(device ? read_device(nvml, index, *device, branch)
                                   : unreadable_device(index, device.missing()));
    }
    return out;
  } catch (const std::exception& e) {
    return Missing{Why::kError, internal_error(e.what())};
  } catch (...) {
    return Missing{Why::kError, internal_error("unknown exception")};
  }
}

Reading<CudaReadings> read_cuda(const Cuda& cuda, bool init_devices) {
  try {
    const CudaEntryPoints& api = cuda.api();
    CudaReadings out;
    out.library = cuda.library();
    // cuDriverGetVersion is the one call that works before cuInit, so the version is known
    // even where initialisation then fails (no device, a driver too old for this libcuda).
    int version = 0;
    auto versioned = cuda_call(cuda, api.driver_get_version, &version);
    out.driver_version =
        versioned ? Reading<int>(version) : Reading<int>(missing_from(versioned.error()));

    if (!init_devices) {
      out.devices_not_read =
          "cuInit not called: NVML answered (it costs about 0.2 s and 20 MB; `sparkdoc snapshot` "
          "reads the CUDA devices)";
      return out;
    }
    CUresult init = api.init(0);
    if (init != CUDA_SUCCESS) {
      out.init_error = cuda.describe(init);
      return out;
    }
    int count = 0;
    if (auto counted = cuda_call(cuda, api.device_get_count, &count); !counted) {
      out.init_error = counted.error().message;
      return out;
    }
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      out.devices.push_back(read_cuda_device(cuda, ordinal));
    }
    return out;
  } catch (const std::exception& e) {
    return Missing{Why::kError, internal_error(e.what())};
  } catch (...) {
    return Missing{Why::kError, internal_error("unknown exception")};
  }
}

GpuReadings read_gpu(const Result<Nvml>& nvml, const Result<Cuda>& cuda) {
  GpuReadings out;
  out.nvml = nvml ? read_nvml(*nvml) : Reading<NvmlReadings>(missing_from(nvml.error()));
  out.cuda = cuda ? read_cuda(*cuda) : Reading<CudaReadings>(missing_from(cuda.error()));
  return out;
}

Reading<NvmlReadings> read_nvml_live() {
  try {
    const Result<Nvml>& nvml = Nvml::instance();
    return nvml ? read_nvml(*nvml) : Reading<NvmlReadings>(missing_from(nvml.error()));
  } catch (...) {
    return Missing{Why::kError, internal_error("loading libnvidia-ml")};
  }
}

Reading<NvmlReadings> read_nvml_once() {
  try {
    Result<Nvml> nvml = load_from_env<Nvml>(Nvml::kLibraryEnv, Nvml::kSoname);
    if (!nvml) return missing_from(nvml.error());
    Reading<NvmlReadings> out = Missing{Why::kError, internal_error("NVML not read")};
    try {
      // The thread exits before the library goes, so whatever NVML left to run at a thread's
      // exit runs while its code is still mapped.
      std::thread reader([&] { out = read_nvml(*nvml); });
      reader.join();
    } catch (const std::system_error&) {
      return read_nvml(*nvml);  // no thread: read here, and leave NVML loaded
    }
    nvml->unload();
    return out;
  } catch (...) {
    return Missing{Why::kError, internal_error("loading libnvidia-ml")};
  }
}

Reading<CudaReadings> read_cuda_live(bool init_devices) {
  try {
    const Result<Cuda>& cuda = Cuda::instance();
    return cuda ? read_cuda(*cuda, init_devices)
                : Reading<CudaReadings>(missing_from(cuda.error()));
  } catch (...) {
    return Missing{Why::kError, internal_error("loading libcuda")};
  }
}

GpuReadings read_gpu() {
  try {
    return read_gpu(Nvml::instance(), Cuda::instance());
  } catch (...) {
    // Only the loaders' first use can get here (an allocation failing while they bind).
    GpuReadings out;
    out.nvml = Missing{Why::kError, internal_error("loading libnvidia-ml")};
    out.cuda = Missing{Why::kError, internal_error("loading libcuda")};
    return out;
  }
}

}  // namespace sparkdoc::gpu
