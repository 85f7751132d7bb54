// A fake libnvidia-ml for tests on machines without a GPU, in the spirit of DCGM's NVML
// injection: it exports the NVML entry points that src/gpu/nvml_api.h binds, with C linkage and
// the same signatures, and answers from the JSON fixture whose path is in
// SPARKDOC_FAKE_GPU_FIXTURE (read again at every first nvmlInit). The fake CUDA library
// (fake_cuda.cpp) reads the "cuda" half of the same file.
//
// Built twice. libsparkdoc_fake_nvml.so exports every name in the table, newest versions and
// their fallbacks. libsparkdoc_fake_nvml_legacy.so (SPARKDOC_FAKE_NVML_LEGACY) exports only the
// oldest name of each entry point and leaves out the optional ones an old driver lacks
// (nvmlSystemGetCudaDriverVersion*, nvmlDeviceGetBusType, nvmlDeviceGetMemoryInfo_v2,
// nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetFieldValues, the _v3 process lists,
// both graphics process lists and the clock lock), so the fallbacks and the missing-symbol path
// are exercised.
//
// Fixture format ("nvml" half):
//   {
//     "nvml": {                           absent: nvmlInit answers DRIVER_NOT_LOADED
//       "driver_version": "580.95.05",    nvmlSystemGetDriverVersion
//       "nvml_version": "13.580.95.05",   nvmlSystemGetNVMLVersion
//       "cuda_driver_version": 13000,     nvmlSystemGetCudaDriverVersion[_v2]
//       "errors": {"nvmlInit_v2": "DRIVER_NOT_LOADED", ...},   any symbol, any device
//       "devices": [{
//         "name": "NVIDIA GB10", "uuid": "GPU-...", "pci_bus_id": "0000000F:01:00.0",
//         "pci_device_id": 11794,         nvmlPciInfo_t.pciDeviceId (optional)
//         "bus_type": 2,                  NVML_BUS_TYPE_*
//         "compute_capability": [12, 1],
//         "memory": {"total_bytes": N, "reserved_bytes": N, "free_bytes": N, "used_bytes": N},
//                                         v1's used is used + reserved, as the driver does
//         "temperature_c": 45, "power_usage_mw": 11170,
//         "enforced_power_limit_mw": N, "default_power_limit_mw": N,
//         "power_limit_constraints_mw": [min, max],
//         "clocks_mhz": {"graphics": N, "sm": N, "mem": N, "video": N},   nvmlDeviceGetClockInfo
//         "max_clocks_mhz": {...},                                        ...GetMaxClockInfo
//         "utilization_pct": {"gpu": N, "memory": N},
//         "pstate": 0, "clock_event_reasons": 0,
//         "fields": {"74": 10800240649000, ...},   nvmlDeviceGetFieldValues, unsigned long long;
//                                                  an id not listed answers NOT_SUPPORTED
//         "compute_processes": [{"pid": 4242, "used_bytes": N}],  null used_bytes is
//         "graphics_processes": [...],                            NVML_VALUE_NOT_AVAILABLE
//         "errors": {"nvmlDeviceGetMemoryInfo_v2": "NOT_SUPPORTED", ...}   this device only
//       }]
//     }
//   }
// A device may also replay a recorded trace, one step per sample:
//         "trace": [{"power_usage_mw": 98700, "temperature_c": 61, "fields": {"74": N}}, ...]
//   Each step is a JSON merge patch (RFC 7386) over the device's own keys: objects merge key by
//   key, anything else replaces, null removes (the call then answers NOT_SUPPORTED). Step 0
//   applies from nvmlInit on; the n-th call of the entry point named by the "nvml" object's
//   "trace_advance_on" (default "nvmlDeviceGetPowerUsage", which a sampler asks once per device
//   per sample, first) on that device moves it to step n, and the last step then stays.
//   Naming another entry point advances per call of that one instead.
// The clock lock (libsparkdoc_fake_nvml.so only; fake_nvml_clocks.cpp):
// nvmlDeviceSetGpuLockedClocks and nvmlDeviceResetGpuLockedClocks answer SUCCESS (or the error the
// "errors" maps inject) and change nothing the other calls answer. When SPARKDOC_FAKE_NVML_CALLS
// names a file, each call that reached a device appends one line to it, so a test can assert what
// was locked and reset:
//   nvmlDeviceSetGpuLockedClocks GPU-3c1f8e2a-... 300 2200 SUCCESS
//   nvmlDeviceResetGpuLockedClocks GPU-3c1f8e2a-... NO_PERMISSION
// Any value (a whole object such as "memory", or one clock, one field) may instead be a status,
// {"error": "NOT_SUPPORTED"}: an NVML constant's name with or without the NVML_ERROR_ prefix, or
// its number; the call then returns that status. The "errors" maps take the same names. A key
// that is absent answers NOT_SUPPORTED. Keys starting with "_" are notes and are ignored.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fake_fixture.h"
#include "fake_nvml_device.h"
#include "gpu/nvml_types.h"

using namespace sparkdoc::gpu::nvml;
using sparkdoc::fake::json;
using sparkdoc::fake::member;

namespace {

constexpr std::array<std::pair<std::string_view, nvmlReturn_t>, 24> kNames = {{
    {"SUCCESS", NVML_SUCCESS},
    {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
    {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
    {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
    {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
    {"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
    {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
    {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
    {"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER},
    {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
    {"TIMEOUT", NVML_ERROR_TIMEOUT},
    {"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
    {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
    {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
    {"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM},
    {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
    {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
    {"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
    {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
    {"IN_USE", NVML_ERROR_IN_USE},
    {"MEMORY", NVML_ERROR_MEMORY},
    {"NO_DATA", NVML_ERROR_NO_DATA},
    {"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
    {"UNKNOWN", NVML_ERROR_UNKNOWN},
}};

// The strings the real nvmlErrorString returns for these codes.
const char* error_text(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}

nvmlReturn_t status_of(const json& value) {
  return sparkdoc::fake::code_from(value, kNames, "NVML_ERROR_", NVML_ERROR_UNKNOWN);
}

// The status a fixture value stands for when it is {"error": ...}.
std::optional<nvmlReturn_t> error_in(const json& value) {
  const json* error = member(value, "error");
  if (error == nullptr) return std::nullopt;
  return status_of(*error);
}

constexpr const char* kDefaultAdvanceOn = "nvmlDeviceGetPowerUsage";

struct State {
  std::mutex mutex;
  json nvml;             // the fixture's "nvml" object, or null
  int init_count = 0;    // nvmlInit minus nvmlShutdown, as the real library counts
  // Trace replay: each device as its current step shows it, and the step it is at.
  std::vector<json> shown;
  std::vector<size_t> step;
  std::vector<bool> advanced;  // whether the advancing entry point was called yet
  std::string advance_on = kDefaultAdvanceOn;
};

State& state() {
  static State instance;
  return instance;
}

nvmlDevice_t handle_of(size_t index) {
  return reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(index + 1));
}

// The device `index` with step `step` of its trace applied (itself when it has no trace).
json device_at_step(const json& device, size_t step) {
  json shown = device;
  const json* trace = member(device, "trace");
  if (trace != nullptr && trace->is_array() && !trace->empty()) {
    shown.erase("trace");
    shown.merge_patch((*trace)[std::min(step, trace->size() - 1)]);
  }
  return shown;
}

// Loads the fixture's devices at step 0 of their traces.
void reset_traces(State& s) {
  s.shown.clear();
  s.step.clear();
  s.advanced.clear();
  s.advance_on = kDefaultAdvanceOn;
  if (const json* advance_on = member(s.nvml, "trace_advance_on");
      advance_on != nullptr && advance_on->is_string()) {
    s.advance_on = advance_on->get<std::string>();
  }
  const json* devices = member(s.nvml, "devices");
  if (devices == nullptr || !devices->is_array()) return;
  for (const json& device : *devices) {
    s.shown.push_back(device_at_step(device, 0));
    s.step.push_back(0);
    s.advanced.push_back(false);
  }
}

// The device a handle names, as its trace shows it now; a call of the advancing entry point
// first moves it to its next step.
const json* device_of(State& s, nvmlDevice_t handle, const char* symbol) {
  auto slot = reinterpret_cast<uintptr_t>(handle);
  if (slot == 0 || slot > s.shown.size()) return nullptr;
  size_t index = slot - 1;
  if (s.advance_on == symbol) {
    if (s.advanced[index]) {
      ++s.step[index];
      s.shown[index] = device_at_step(s.nvml["devices"][index], s.step[index]);
    }
    s.advanced[index] = true;
  }
  return &s.shown[index];
}

std::optional<nvmlReturn_t> injected(const json& scope, const char* symbol) {
  return sparkdoc::fake::injected(scope, symbol, kNames, "NVML_ERROR_", NVML_ERROR_UNKNOWN);
}

// Runs `body(nvml)` for an initialised library, unless the fixture injects an error for `symbol`.
template <class Body>
nvmlReturn_t system_call(const char* symbol, Body body) {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (auto error = injected(s.nvml, symbol)) return *error;
    return body(s);
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Runs `body(device)` for a valid handle, unless an error is injected for `symbol` at the top
// level or on the device.
template <class Body>
nvmlReturn_t device_call(const char* symbol, nvmlDevice_t handle, Body body) {
  return system_call(symbol, [&](State& s) {
    const json* device = device_of(s, handle, symbol);
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (auto error = injected(*device, symbol)) return *error;
    return body(*device);
  });
}

// Writes `scope[key]` to *out, or returns the status the fixture puts there.
template <class T>
nvmlReturn_t value_of(const json& scope, std::string_view key, T* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* value = member(scope, key);
  if (value == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (auto error = error_in(*value)) return *error;
  *out = value->get<T>();
  return NVML_SUCCESS;
}

nvmlReturn_t string_of(const json& scope, std::string_view key, char* buffer, unsigned length) {
  if (buffer == nullptr || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  const json* value = member(scope, key);
  if (value == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (auto error = error_in(*value)) return *error;
  const std::string& text = value->get_ref<const std::string&>();
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

const char* clock_key(nvmlClockType_t type) {
  switch (type) {
    case NVML_CLOCK_GRAPHICS: return "graphics";
    case NVML_CLOCK_SM: return "sm";
    case NVML_CLOCK_MEM: return "mem";
    case NVML_CLOCK_VIDEO: return "video";
  }
  return "";
}

nvmlReturn_t clock_of(const json& device, const char* table, nvmlClockType_t type,
                      unsigned* mhz) {
  const json* clocks = member(device, table);
  if (clocks == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (auto error = error_in(*clocks)) return *error;
  return value_of(*clocks, clock_key(type), mhz);
}

nvmlReturn_t processes_of(const json& device, const char* key, unsigned* count,
                          nvmlProcessInfo_t* infos) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* list = member(device, key);
  if (list == nullptr) {
    *count = 0;
    return NVML_SUCCESS;
  }
  if (auto error = error_in(*list)) return *error;
  auto needed = static_cast<unsigned>(list->size());
  if (*count < needed || (needed > 0 && infos == nullptr)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < needed; ++i) {
    const json& entry = (*list)[i];
    const json* used = member(entry, "used_bytes");
    infos[i].pid = entry.at("pid").get<unsigned>();
    infos[i].usedGpuMemory = used == nullptr || used->is_null()
                                 ? NVML_VALUE_NOT_AVAILABLE
                                 : used->get<unsigned long long>();
    infos[i].gpuInstanceId = 0xFFFFFFFF;
    infos[i].computeInstanceId = 0xFFFFFFFF;
  }
  *count = needed;
  return NVML_SUCCESS;
}

nvmlReturn_t init(const char* symbol) {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.init_count == 0) {
      json fixture = sparkdoc::fake::load_fixture();
      if (fixture.is_null()) return NVML_ERROR_UNKNOWN;
      const json* nvml = member(fixture, "nvml");
      if (nvml == nullptr) return NVML_ERROR_DRIVER_NOT_LOADED;
      if (auto error = injected(*nvml, symbol)) return *error;
      s.nvml = *nvml;
      reset_traces(s);
    }
    ++s.init_count;
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t device_count(const char* symbol, unsigned* count) {
  return system_call(symbol, [&](State& s) {
    const json& nvml = s.nvml;
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* devices = member(nvml, "devices");
    *count = devices != nullptr && devices->is_array() ? static_cast<unsigned>(devices->size())
                                                       : 0u;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t handle_by_index(const char* symbol, unsigned index, nvmlDevice_t* device) {
  return system_call(symbol, [&](State& s) {
    const json& nvml = s.nvml;
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* devices = member(nvml, "devices");
    if (devices == nullptr || !devices->is_array() || index >= devices->size()) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (auto error = injected((*devices)[index], symbol)) return *error;
    *device = handle_of(index);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t memory_v1(const char* symbol, nvmlDevice_t device, nvmlMemory_t* memory) {
  return device_call(symbol, device, [&](const json& d) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* m = member(d, "memory");
    if (m == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    if (auto error = error_in(*m)) return *error;
    memory->total = m->value("total_bytes", 0ull);
    memory->free = m->value("free_bytes", 0ull);
    memory->used = m->value("used_bytes", 0ull) + m->value("reserved_bytes", 0ull);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t clocks_event_reasons(const char* symbol, nvmlDevice_t device,
                                  unsigned long long* reasons) {
  return device_call(symbol, device,
                     [&](const json& d) { return value_of(d, "clock_event_reasons", reasons); });
}

nvmlReturn_t process_list(const char* symbol, const char* key, nvmlDevice_t device,
                          unsigned* count, nvmlProcessInfo_t* infos) {
  return device_call(symbol, device,
                     [&](const json& d) { return processes_of(d, key, count, infos); });
}

}  // namespace

namespace sparkdoc::fake {

nvmlReturn_t on_device(const char* symbol, nvmlDevice_t handle,
                       const std::function<nvmlReturn_t(const json&)>& body) {
  return device_call(symbol, handle, body);
}

std::optional<std::string> device_uuid(nvmlDevice_t handle) {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto slot = reinterpret_cast<uintptr_t>(handle);
    if (s.init_count == 0 || slot == 0 || slot > s.shown.size()) return std::nullopt;
    const json* uuid = member(s.shown[slot - 1], "uuid");
    return uuid != nullptr && uuid->is_string() ? uuid->get<std::string>() : std::string("?");
  } catch (...) {
    return std::nullopt;
  }
}

std::string_view status_name(nvmlReturn_t code) {
  for (const auto& [name, value] : kNames) {
    if (value == code) return name;
  }
  return "UNKNOWN";
}

}  // namespace sparkdoc::fake

extern "C" {

nvmlReturn_t nvmlInit(void) { return init("nvmlInit"); }

nvmlReturn_t nvmlShutdown(void) {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
    --s.init_count;
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

const char* nvmlErrorString(nvmlReturn_t result) { return error_text(result); }

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return system_call("nvmlSystemGetDriverVersion", [&](State& s) {
    return string_of(s.nvml, "driver_version", version, length);
  });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  return system_call("nvmlSystemGetNVMLVersion", [&](State& s) {
    return string_of(s.nvml, "nvml_version", version, length);
  });
}

nvmlReturn_t nvmlDeviceGetCount(unsigned* count) {
  return device_count("nvmlDeviceGetCount", count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex", index, device);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  return device_call("nvmlDeviceGetName", device,
                     [&](const json& d) { return string_of(d, "name", name, length); });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  return device_call("nvmlDeviceGetUUID", device,
                     [&](const json& d) { return string_of(d, "uuid", uuid, length); });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return device_call("nvmlDeviceGetPciInfo_v3", device, [&](const json& d) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *pci = nvmlPciInfo_t{};
    nvmlReturn_t status = string_of(d, "pci_bus_id", pci->busId, sizeof(pci->busId));
    if (status != NVML_SUCCESS) return status;
    pci->pciDeviceId = d.value("pci_device_id", 0u);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return device_call("nvmlDeviceGetCudaComputeCapability", device, [&](const json& d) {
    if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* cc = member(d, "compute_capability");
    if (cc == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    if (auto error = error_in(*cc)) return *error;
    *major = cc->at(0).get<int>();
    *minor = cc->at(1).get<int>();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return memory_v1("nvmlDeviceGetMemoryInfo", device, memory);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                      unsigned* temperature) {
  return device_call("nvmlDeviceGetTemperature", device, [&](const json& d) {
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    return value_of(d, "temperature_c", temperature);
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* power_mw) {
  return device_call("nvmlDeviceGetPowerUsage", device,
                     [&](const json& d) { return value_of(d, "power_usage_mw", power_mw); });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* limit_mw) {
  return device_call("nvmlDeviceGetEnforcedPowerLimit", device, [&](const json& d) {
    return value_of(d, "enforced_power_limit_mw", limit_mw);
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned* limit_mw) {
  return device_call("nvmlDeviceGetPowerManagementDefaultLimit", device, [&](const json& d) {
    return value_of(d, "default_power_limit_mw", limit_mw);
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned* min_limit_mw,
                                                          unsigned* max_limit_mw) {
  return device_call("nvmlDeviceGetPowerManagementLimitConstraints", device, [&](const json& d) {
    if (min_limit_mw == nullptr || max_limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* limits = member(d, "power_limit_constraints_mw");
    if (limits == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    if (auto error = error_in(*limits)) return *error;
    *min_limit_mw = limits->at(0).get<unsigned>();
    *max_limit_mw = limits->at(1).get<unsigned>();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* mhz) {
  return device_call("nvmlDeviceGetClockInfo", device,
                     [&](const json& d) { return clock_of(d, "clocks_mhz", type, mhz); });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned* mhz) {
  return device_call("nvmlDeviceGetMaxClockInfo", device,
                     [&](const json& d) { return clock_of(d, "max_clocks_mhz", type, mhz); });
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* rates) {
  return device_call("nvmlDeviceGetUtilizationRates", device, [&](const json& d) {
    if (rates == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const json* u = member(d, "utilization_pct");
    if (u == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    if (auto error = error_in(*u)) return *error;
    rates->gpu = u->value("gpu", 0u);
    rates->memory = u->value("memory", 0u);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pstate) {
  return device_call("nvmlDeviceGetPerformanceState", device, [&](const json& d) {
    int value = 0;
    nvmlReturn_t status = value_of(d, "pstate", pstate == nullptr ? nullptr : &value);
    if (status == NVML_SUCCESS) *pstate = static_cast<nvmlPstates_t>(value);
    return status;
  });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* reasons) {
  return clocks_event_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                                     nvmlProcessInfo_t* infos) {
  return process_list("nvmlDeviceGetComputeRunningProcesses_v2", "compute_processes", device,
                      count, infos);
}

#ifndef SPARKDOC_FAKE_NVML_LEGACY

nvmlReturn_t nvmlInit_v2(void) { return init("nvmlInit_v2"); }

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return system_call("nvmlSystemGetCudaDriverVersion_v2", [&](State& s) {
    return value_of(s.nvml, "cuda_driver_version", version);
  });
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return system_call("nvmlSystemGetCudaDriverVersion", [&](State& s) {
    return value_of(s.nvml, "cuda_driver_version", version);
  });
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  return device_count("nvmlDeviceGetCount_v2", count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device);
}

nvmlReturn_t nvmlDeviceGetBusType(nvmlDevice_t device, nvmlBusType_t* type) {
  return device_call("nvmlDeviceGetBusType", device,
                     [&](const json& d) { return value_of(d, "bus_type", type); });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return device_call("nvmlDeviceGetMemoryInfo_v2", device, [&](const json& d) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // The real driver checks the struct version first; a bare 2 is the classic mistake.
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const json* m = member(d, "memory");
    if (m == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    if (auto error = error_in(*m)) return *error;
    memory->total = m->value("total_bytes", 0ull);
    memory->reserved = m->value("reserved_bytes", 0ull);
    memory->free = m->value("free_bytes", 0ull);
    memory->used = m->value("used_bytes", 0ull);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* reasons) {
  return clocks_event_reasons("nvmlDeviceGetCurrentClocksEventReasons", device, reasons);
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  return device_call("nvmlDeviceGetFieldValues", device, [&](const json& d) {
    if (count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
    const json* fields = member(d, "fields");
    for (int i = 0; i < count; ++i) {
      nvmlFieldValue_t& field = values[i];
      field.timestamp = 1764374400000000;
      field.latencyUsec = 0;
      field.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      field.value.ullVal = 0;
      const json* value =
          fields == nullptr ? nullptr : member(*fields, std::to_string(field.fieldId));
      if (value == nullptr) {
        field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      } else if (auto error = error_in(*value)) {
        field.nvmlReturn = *error;
      } else {
        field.nvmlReturn = NVML_SUCCESS;
        field.value.ullVal = value->get<unsigned long long>();
      }
    }
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                     nvmlProcessInfo_t* infos) {
  return process_list("nvmlDeviceGetComputeRunningProcesses_v3", "compute_processes", device,
                      count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                      nvmlProcessInfo_t* infos) {
  return process_list("nvmlDeviceGetGraphicsRunningProcesses_v3", "graphics_processes", device,
                      count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                                      nvmlProcessInfo_t* infos) {
  return process_list("nvmlDeviceGetGraphicsRunningProcesses_v2", "graphics_processes", device,
                      count, infos);
}

#endif  // SPARKDOC_FAKE_NVML_LEGACY

}  // extern "C"
