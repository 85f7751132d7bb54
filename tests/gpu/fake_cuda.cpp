// A fake libcuda for tests on machines without a GPU (the idea of runai's mock libcuda in CI):
// it exports the driver API entry points that src/gpu/cuda_api.h binds, with C linkage and the
// same signatures, and answers from the "cuda" half of the JSON fixture whose path is in
// SPARKDOC_FAKE_GPU_FIXTURE (see fake_nvml.cpp for the "nvml" half). The fixture is read again
// by cuDriverGetVersion and cuInit, so a test may switch fixtures between readings.
//
// Fixture format ("cuda" half):
//   {
//     "cuda": {                          absent: every call answers CUDA_ERROR_UNKNOWN
//       "driver_version": 13000,         cuDriverGetVersion (works before cuInit)
//       "init": "SUCCESS",               what cuInit returns: "NO_DEVICE",
//                                        "CUDA_ERROR_INSUFFICIENT_DRIVER", 100, ...
//       "errors": {"cuDeviceTotalMem_v2": "NOT_SUPPORTED"},   any symbol, any device
//       "devices": [{
//         "name": "NVIDIA GB10",
//         "total_memory_bytes": 130663165952,
//         "attributes": {"75": 12, "76": 1, "18": 1, "88": 1, "16": 48},
//                                        CU_DEVICE_ATTRIBUTE_* by number; one not listed
//                                        answers CUDA_ERROR_INVALID_VALUE, as the driver does
//                                        for an attribute it does not know
//         "free_memory_bytes": 98000000000,  cuMemGetInfo_v2's free figure inside a context on
//                                        this device; absent: total_memory_bytes
//         "errors": {"cuDeviceGetName": "UNKNOWN"}            this device only
//       }]
//     }
//   }
// Status names are CUresult constants with or without the CUDA_ERROR_ prefix, or numbers.
// Calls other than cuDriverGetVersion, cuGetErrorName and cuGetErrorString answer
// CUDA_ERROR_NOT_INITIALIZED until cuInit has succeeded.
//
// Contexts: cuDevicePrimaryCtxRetain/Release_v2 count references per device (a fixture reload
// does not reset them), cuCtxPushCurrent_v2/PopCurrent_v2 keep a per-thread stack, and
// cuMemGetInfo_v2 answers CUDA_ERROR_INVALID_CONTEXT with an empty stack, as the driver does.
// Tests read the reference count through sparkdoc_fake_cuda_primary_retained(device).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fake_fixture.h"
#include "gpu/cuda_types.h"

using namespace sparkdoc::gpu::cuda;
using sparkdoc::fake::json;
using sparkdoc::fake::member;

namespace {

struct ErrorName {
  CUresult code;
  std::string_view name;  // without the CUDA_ERROR_ prefix
  const char* text;       // what the real cuGetErrorString says
};

constexpr std::array<ErrorName, 15> kErrors = {{
    {CUDA_ERROR_INVALID_VALUE, "INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_INSUFFICIENT_DRIVER, "INSUFFICIENT_DRIVER",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {CUDA_ERROR_NO_DEVICE, "NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_NOT_PERMITTED, "NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {CUDA_ERROR_UNKNOWN, "UNKNOWN", "unknown error"},
}};

constexpr auto kNames = [] {
  std::array<std::pair<std::string_view, CUresult>, kErrors.size() + 1> names{};
  names[0] = {"SUCCESS", CUDA_SUCCESS};
  for (size_t i = 0; i < kErrors.size(); ++i) names[i + 1] = {kErrors[i].name, kErrors[i].code};
  return names;
}();

CUresult status_of(const json& value) {
  return sparkdoc::fake::code_from(value, kNames, "CUDA_ERROR_", CUDA_ERROR_UNKNOWN);
}

std::optional<CUresult> injected(const json& scope, const char* symbol) {
  return sparkdoc::fake::injected(scope, symbol, kNames, "CUDA_ERROR_", CUDA_ERROR_UNKNOWN);
}

constexpr int kMaxDevices = 16;

struct State {
  std::mutex mutex;
  json cuda;                 // the fixture's "cuda" object, or null
  bool initialised = false;  // the last cuInit succeeded
  std::array<int, kMaxDevices> primary_retained{};  // references per device
};

// One byte per device: a primary context's handle is the address of its device's byte.
std::array<char, kMaxDevices> context_tokens{};

CUcontext context_of(CUdevice device) {
  return reinterpret_cast<CUcontext>(&context_tokens[static_cast<size_t>(device)]);
}

// The device a context handle names, or -1 for a handle the fake did not give out.
int device_of_context(CUcontext context) {
  for (int d = 0; d < kMaxDevices; ++d) {
    if (context == context_of(d)) return d;
  }
  return -1;
}

std::vector<CUcontext>& context_stack() {
  thread_local std::vector<CUcontext> stack;
  return stack;
}

State& state() {
  static State instance;
  return instance;
}

// Re-reads the fixture; the caller holds the lock.
void reload(State& s) {
  json fixture = sparkdoc::fake::load_fixture();
  const json* cuda = member(fixture, "cuda");
  s.cuda = cuda == nullptr ? json(nullptr) : *cuda;
  s.initialised = false;
}

const json* device_of(const json& cuda, CUdevice device) {
  const json* devices = member(cuda, "devices");
  if (devices == nullptr || !devices->is_array() || device < 0 ||
      static_cast<size_t>(device) >= devices->size()) {
    return nullptr;
  }
  return &(*devices)[static_cast<size_t>(device)];
}

// Runs `body(cuda)` once cuInit has succeeded, unless an error is injected for `symbol`.
template <class Body>
CUresult initialised_call(const char* symbol, Body body) {
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.cuda.is_null()) return CUDA_ERROR_UNKNOWN;
    if (!s.initialised) return CUDA_ERROR_NOT_INITIALIZED;
    if (auto error = injected(s.cuda, symbol)) return *error;
    return body(s.cuda);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

template <class Body>
CUresult device_call(const char* symbol, CUdevice device, Body body) {
  return initialised_call(symbol, [&](const json& cuda) {
    const json* d = device_of(cuda, device);
    if (d == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (auto error = injected(*d, symbol)) return *error;
    return body(*d);
  });
}

const ErrorName* error_entry(CUresult code) {
  for (const ErrorName& entry : kErrors) {
    if (entry.code == code) return &entry;
  }
  return nullptr;
}

}  // namespace

extern "C" {

CUresult cuDriverGetVersion(int* version) {
  try {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mutex);
    reload(s);
    if (s.cuda.is_null()) return CUDA_ERROR_UNKNOWN;
    if (auto error = injected(s.cuda, "cuDriverGetVersion")) return *error;
    *version = s.cuda.value("driver_version", 0);
    return CUDA_SUCCESS;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

CUresult cuInit(unsigned flags) {
  try {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mutex);
    reload(s);
    if (s.cuda.is_null()) return CUDA_ERROR_UNKNOWN;
    const json* init = member(s.cuda, "init");
    CUresult result = init == nullptr ? CUDA_SUCCESS : status_of(*init);
    s.initialised = result == CUDA_SUCCESS;
    return result;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  try {
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (error == CUDA_SUCCESS) {
      *name = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    }
    // The real table holds "CUDA_ERROR_..." literals; these are built once and never freed.
    static const auto kFullNames = [] {
      std::array<std::string, kErrors.size()> full;
      for (size_t i = 0; i < kErrors.size(); ++i) {
        full[i] = "CUDA_ERROR_" + std::string(kErrors[i].name);
      }
      return full;
    }();
    for (size_t i = 0; i < kErrors.size(); ++i) {
      if (kErrors[i].code == error) {
        *name = kFullNames[i].c_str();
        return CUDA_SUCCESS;
      }
    }
    *name = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (error == CUDA_SUCCESS) {
    *text = "no error";
    return CUDA_SUCCESS;
  }
  const ErrorName* entry = error_entry(error);
  *text = entry == nullptr ? nullptr : entry->text;
  return entry == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  return initialised_call("cuDeviceGetCount", [&](const json& cuda) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const json* devices = member(cuda, "devices");
    *count = devices != nullptr && devices->is_array() ? static_cast<int>(devices->size()) : 0;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return device_call("cuDeviceGet", ordinal, [&](const json&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  return device_call("cuDeviceGetName", device, [&](const json& d) {
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::string text = d.value("name", std::string());
    // The driver truncates to the buffer and always terminates.
    size_t n = std::min(text.size(), static_cast<size_t>(length) - 1);
    std::memcpy(name, text.data(), n);
    name[n] = '\0';
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  return device_call("cuDeviceGetAttribute", device, [&](const json& d) {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const json* attributes = member(d, "attributes");
    const json* entry = attributes == nullptr
                            ? nullptr
                            : member(*attributes, std::to_string(static_cast<int>(attribute)));
    if (entry == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *value = entry->get<int>();
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  return device_call("cuDeviceTotalMem_v2", device, [&](const json& d) {
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *bytes = d.value("total_memory_bytes", size_t{0});
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  State& s = state();
  return device_call("cuDevicePrimaryCtxRetain", device, [&](const json&) {
    if (context == nullptr || device >= kMaxDevices) return CUDA_ERROR_INVALID_VALUE;
    ++s.primary_retained[static_cast<size_t>(device)];
    *context = context_of(device);
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  State& s = state();
  return device_call("cuDevicePrimaryCtxRelease_v2", device, [&](const json&) {
    if (device >= kMaxDevices) return CUDA_ERROR_INVALID_DEVICE;
    int& count = s.primary_retained[static_cast<size_t>(device)];
    if (count == 0) return CUDA_ERROR_INVALID_CONTEXT;
    --count;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxPushCurrent_v2(CUcontext context) {
  return initialised_call("cuCtxPushCurrent_v2", [&](const json&) {
    if (device_of_context(context) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    context_stack().push_back(context);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  return initialised_call("cuCtxPopCurrent_v2", [&](const json&) {
    auto& stack = context_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) *context = stack.back();
    stack.pop_back();
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  return initialised_call("cuMemGetInfo_v2", [&](const json& cuda) {
    if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto& stack = context_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    const json* d = device_of(cuda, device_of_context(stack.back()));
    if (d == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (auto error = injected(*d, "cuMemGetInfo_v2")) return *error;
    *total_bytes = d->value("total_memory_bytes", size_t{0});
    *free_bytes = d->value("free_memory_bytes", *total_bytes);
    return CUDA_SUCCESS;
  });
}

// Test hook: the primary context's reference count on `device` (-1 for a device out of range).
int sparkdoc_fake_cuda_primary_retained(int device) {
  if (device < 0 || device >= kMaxDevices) return -1;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.primary_retained[static_cast<size_t>(device)];
}

}  // extern "C"
