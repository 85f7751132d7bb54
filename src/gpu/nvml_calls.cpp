#include "gpu/nvml_calls.h"

#include <algorithm>
#include <utility>

namespace sparkdoc::gpu {

using namespace nvml;

Reading<MemoryInfo> read_memory(const Nvml& nvml, nvmlDevice_t device) {
  const NvmlEntryPoints& api = nvml.api();
  std::optional<Error> first_failure;
  // _v2 is preferred because its `used` leaves out the driver's reservation. v1 is asked when
  // _v2 is missing or fails (gpud falls back the same way); GB10 answers NOT_SUPPORTED to both,
  // having no dedicated framebuffer, and then _v2's answer is the one recorded.
  if (api.device_get_memory_info_v2) {
    nvmlMemory_v2_t memory{};
    memory.version = nvmlMemory_v2;
    auto status = nvml_call(nvml, api.device_get_memory_info_v2, device, &memory);
    if (status) return MemoryInfo{memory.total, memory.free, memory.used};
    first_failure = status.error();
  }
  if (api.device_get_memory_info) {
    nvmlMemory_t memory{};
    auto status = nvml_call(nvml, api.device_get_memory_info, device, &memory);
    if (status) return MemoryInfo{memory.total, memory.free, memory.used};
    if (!first_failure) first_failure = status.error();
  }
  if (first_failure) return missing_from(*first_failure);
  return Missing{Why::kNotSupported, api.device_get_memory_info_v2.missing() + "; " +
                                         api.device_get_memory_info.missing()};
}

namespace {

using ProcessQuery = Symbol<nvmlReturn_t(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*)>;

Result<std::vector<GpuProcess>> list_processes(const Nvml& nvml, const ProcessQuery& fn,
                                               nvmlDevice_t device, const char* type) {
  if (!fn) return fail(Why::kNotSupported, fn.missing());
  std::vector<nvmlProcessInfo_t> infos;
  // Room for the usual handful of processes, so one call answers: each call is a round trip
  // into the driver (on GSP-based GPUs an RPC to the GPU's firmware), and a sampler makes it
  // every second. With more processes NVML answers INSUFFICIENT_SIZE and the count; processes
  // can start between that answer and the next call, so the list is fetched with slack, a few
  // times.
  unsigned capacity = 16;
  for (int attempt = 0; attempt < 4; ++attempt) {
    infos.assign(capacity, nvmlProcessInfo_t{});
    unsigned count = capacity;
    nvmlReturn_t code = fn(device, &count, infos.empty() ? nullptr : infos.data());
    if (code == NVML_SUCCESS) {
      infos.resize(std::min<size_t>(count, infos.size()));
      std::vector<GpuProcess> processes;
      for (const nvmlProcessInfo_t& info : infos) {
        GpuProcess process;
        process.pid = info.pid;
        process.type = type;
        if (info.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE) {
          process.used_bytes = Missing{Why::kNotSupported,
                                       fn.name() + " reports NVML_VALUE_NOT_AVAILABLE"};
        } else {
          process.used_bytes = uint64_t{info.usedGpuMemory};
        }
        processes.push_back(std::move(process));
      }
      return processes;
    }
    if (code != NVML_ERROR_INSUFFICIENT_SIZE) {
      return tl::unexpected<Error>(nvml.error(code, fn.name()));
    }
    capacity = count + 8;
  }
  return fail(Why::kError, fn.name() + " kept returning NVML_ERROR_INSUFFICIENT_SIZE");
}

}  // namespace

Reading<std::vector<GpuProcess>> read_processes(const Nvml& nvml, nvmlDevice_t device) {
  const NvmlEntryPoints& api = nvml.api();
  auto processes = list_processes(nvml, api.device_get_compute_running_processes, device,
                                  "compute");
  if (!processes) return missing_from(processes.error());
  auto graphics = list_processes(nvml, api.device_get_graphics_running_processes, device,
                                 "graphics");
  if (graphics) {
    processes->insert(processes->end(), graphics->begin(), graphics->end());
  } else if (graphics.error().why != Why::kNotSupported) {
    // Graphics clients hold memory too (Xorg and the desktop on a Spark), so a list that
    // failed for another reason would under-count; a device that cannot list them at all
    // still has a complete compute list.
    return missing_from(graphics.error());
  }
  return *processes;
}

Reading<uint64_t> field_value(const Nvml& nvml, const nvmlFieldValue_t& field) {
  std::string what = "nvmlDeviceGetFieldValues(" + std::to_string(field.fieldId) + ")";
  if (field.nvmlReturn != NVML_SUCCESS) return missing_from(nvml.error(field.nvmlReturn, what));
  switch (field.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return uint64_t{field.value.ullVal};
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return uint64_t{field.value.ulVal};
    case NVML_VALUE_TYPE_UNSIGNED_INT: return uint64_t{field.value.uiVal};
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return uint64_t{field.value.usVal};
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      if (field.value.sllVal >= 0) return static_cast<uint64_t>(field.value.sllVal);
      break;
    case NVML_VALUE_TYPE_SIGNED_INT:
      if (field.value.siVal >= 0) return static_cast<uint64_t>(field.value.siVal);
      break;
    default:
      break;
  }
  return Missing{Why::kError, what + " answered value type " +
                                  std::to_string(static_cast<int>(field.valueType)) +
                                  ", not a non-negative integer"};
}

std::optional<int> driver_branch(const Reading<std::string>& driver_version) {
  if (!driver_version) return std::nullopt;
  int branch = 0;
  size_t digits = 0;
  for (char c : *driver_version) {
    if (c < '0' || c > '9' || digits == 4) break;
    branch = branch * 10 + (c - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return branch;
}

void fall_back_to_r575_counter_ids(const Nvml& nvml, nvmlDevice_t device,
                                   std::optional<int> branch, Reading<uint64_t>& sw_thermal_ns,
                                   Reading<uint64_t>& hw_thermal_ns,
                                   Reading<uint64_t>& hw_power_brake_ns) {
  bool none_of_three = !sw_thermal_ns && !hw_thermal_ns && !hw_power_brake_ns;
  if (!none_of_three || !branch || *branch >= 580) return;
  auto older = read_fields<3>(nvml, device,
                              {r575::NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
                               r575::NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
                               r575::NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN});
  sw_thermal_ns = older[0];
  hw_thermal_ns = older[1];
  hw_power_brake_ns = older[2];
}

}  // namespace sparkdoc::gpu
