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
// Memory: device memory is host memory (malloc), so copies are memcpy and a test can read what
// a "device" buffer holds through sparkdoc_fake_cuda_device_bytes. Allocations count against
// the current context's device: its "free_memory_bytes" (or "total_memory_bytes") bounds the sum
// of live cuMemAlloc_v2 sizes, and an allocation past it answers CUDA_ERROR_OUT_OF_MEMORY, as a
// full GPU does. Streams and events are synchronous: an async copy is done when the call
// returns, and cuEventElapsedTime_v2 measures host time between two records. Every pointer is
// checked against the live allocations (CUDA_ERROR_INVALID_VALUE for a copy out of bounds).
// Tests read the live counts through sparkdoc_fake_cuda_live(kind) to show nothing leaks.
//
// Contexts: cuDevicePrimaryCtxRetain/Release_v2 count references per device (a fixture reload
// does not reset them), cuCtxPushCurrent_v2/PopCurrent_v2 keep a per-thread stack, and
// cuMemGetInfo_v2 answers CUDA_ERROR_INVALID_CONTEXT with an empty stack, as the driver does.
// Tests read the reference count through sparkdoc_fake_cuda_primary_retained(device).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <set>
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

constexpr std::array<ErrorName, 19> kErrors = {{
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
    {CUDA_ERROR_INVALID_HANDLE, "INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_READY, "NOT_READY", "device not ready"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
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

// ---- Memory, copies, streams, events ----------------------------------------------------------

}  // extern "C"

namespace {

struct Allocation {
  std::unique_ptr<unsigned char[]> bytes;
  size_t size = 0;
  int device = 0;
};

struct Memory {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> device;  // by start address
  std::map<uintptr_t, size_t> host;        // cuMemHostAlloc'd, by address
  std::map<uintptr_t, size_t> registered;  // cuMemHostRegister'd, by address
  std::set<uintptr_t> streams;
  std::map<uintptr_t, std::chrono::steady_clock::time_point> events;  // last record
  std::set<uintptr_t> event_handles;
  uintptr_t next_handle = 0x1000;
  std::map<std::string, long, std::less<>> calls;  // context calls made, by symbol
};

Memory& memory() {
  static Memory instance;
  return instance;
}

// The device of the context current on this thread, or -1.
int current_device() {
  const auto& stack = context_stack();
  return stack.empty() ? -1 : device_of_context(stack.back());
}

// The allocation holding [address, address + size), or nullptr.
const Allocation* find_device(Memory& m, CUdeviceptr address, size_t size) {
  auto it = m.device.upper_bound(static_cast<uintptr_t>(address));
  if (it == m.device.begin()) return nullptr;
  --it;
  uintptr_t start = it->first;
  if (address < start || address - start > it->second.size ||
      size > it->second.size - (address - start)) {
    return nullptr;
  }
  return &it->second;
}

// A call that needs a current context; `body(memory, device_json, device)` under both locks.
template <class Body>
CUresult context_call(const char* symbol, Body body) {
  return initialised_call(symbol, [&](const json& cuda) {
    int device = current_device();
    const json* d = device_of(cuda, device);
    if (d == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (auto error = injected(*d, symbol)) return *error;
    Memory& m = memory();
    std::lock_guard lock(m.mutex);
    ++m.calls[symbol];
    return body(m, *d, device);
  });
}

CUresult copy(Memory& m, void* to, CUdeviceptr to_device, const void* from, CUdeviceptr from_device,
              size_t bytes) {
  if (to == nullptr) {
    if (find_device(m, to_device, bytes) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    to = reinterpret_cast<void*>(static_cast<uintptr_t>(to_device));
  }
  if (from == nullptr) {
    if (find_device(m, from_device, bytes) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    from = reinterpret_cast<const void*>(static_cast<uintptr_t>(from_device));
  }
  if (bytes > 0) std::memmove(to, from, bytes);
  return CUDA_SUCCESS;
}

bool stream_ok(Memory& m, CUstream stream) {
  return stream == nullptr || m.streams.count(reinterpret_cast<uintptr_t>(stream)) != 0;
}

}  // namespace

extern "C" {

CUresult cuCtxSetCurrent(CUcontext context) {
  return initialised_call("cuCtxSetCurrent", [&](const json&) {
    auto& stack = context_stack();
    if (context == nullptr) {
      if (!stack.empty()) stack.pop_back();
      return CUDA_SUCCESS;
    }
    if (device_of_context(context) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (stack.empty()) {
      stack.push_back(context);
    } else {
      stack.back() = context;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetCurrent(CUcontext* context) {
  return initialised_call("cuCtxGetCurrent", [&](const json&) {
    if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto& stack = context_stack();
    *context = stack.empty() ? nullptr : stack.back();
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSynchronize() {
  return context_call("cuCtxSynchronize", [](Memory&, const json&, int) { return CUDA_SUCCESS; });
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  return context_call("cuMemAlloc_v2", [&](Memory& m, const json& d, int device) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    size_t limit = d.value("free_memory_bytes", d.value("total_memory_bytes", size_t{0}));
    size_t used = 0;
    for (const auto& [address, a] : m.device) {
      if (a.device == device) used += a.size;
    }
    if (bytes > limit || used > limit - bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    Allocation a;
    a.bytes.reset(new (std::nothrow) unsigned char[bytes]);
    if (!a.bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    a.size = bytes;
    a.device = device;
    auto address = reinterpret_cast<uintptr_t>(a.bytes.get());
    m.device.emplace(address, std::move(a));
    *pointer = static_cast<CUdeviceptr>(address);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  return context_call("cuMemFree_v2", [&](Memory& m, const json&, int) {
    if (pointer == 0) return CUDA_SUCCESS;
    auto it = m.device.find(static_cast<uintptr_t>(pointer));
    if (it == m.device.end()) return CUDA_ERROR_INVALID_VALUE;
    m.device.erase(it);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostAlloc(void** pointer, size_t bytes, unsigned) {
  return context_call("cuMemHostAlloc", [&](Memory& m, const json&, int) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    m.host.emplace(reinterpret_cast<uintptr_t>(p), bytes);
    *pointer = p;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemFreeHost(void* pointer) {
  return context_call("cuMemFreeHost", [&](Memory& m, const json&, int) {
    auto it = m.host.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == m.host.end()) return CUDA_ERROR_INVALID_VALUE;
    m.host.erase(it);
    std::free(pointer);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostRegister_v2(void* pointer, size_t bytes, unsigned) {
  return context_call("cuMemHostRegister_v2", [&](Memory& m, const json&, int) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!m.registered.emplace(reinterpret_cast<uintptr_t>(pointer), bytes).second) {
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostUnregister(void* pointer) {
  return context_call("cuMemHostUnregister", [&](Memory& m, const json&, int) {
    if (m.registered.erase(reinterpret_cast<uintptr_t>(pointer)) == 0) {
      return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void* from, size_t bytes) {
  return context_call("cuMemcpyHtoD_v2", [&](Memory& m, const json&, int) {
    if (from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return copy(m, nullptr, to, from, 0, bytes);
  });
}

CUresult cuMemcpyDtoH_v2(void* to, CUdeviceptr from, size_t bytes) {
  return context_call("cuMemcpyDtoH_v2", [&](Memory& m, const json&, int) {
    if (to == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return copy(m, to, 0, nullptr, from, bytes);
  });
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes) {
  return context_call("cuMemcpyDtoD_v2", [&](Memory& m, const json&, int) {
    return copy(m, nullptr, to, nullptr, from, bytes);
  });
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void* from, size_t bytes, CUstream stream) {
  return context_call("cuMemcpyHtoDAsync_v2", [&](Memory& m, const json&, int) {
    if (from == nullptr || !stream_ok(m, stream)) return CUDA_ERROR_INVALID_VALUE;
    return copy(m, nullptr, to, from, 0, bytes);
  });
}

CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes, CUstream stream) {
  return context_call("cuMemcpyDtoHAsync_v2", [&](Memory& m, const json&, int) {
    if (to == nullptr || !stream_ok(m, stream)) return CUDA_ERROR_INVALID_VALUE;
    return copy(m, to, 0, nullptr, from, bytes);
  });
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream) {
  return context_call("cuMemcpyDtoDAsync_v2", [&](Memory& m, const json&, int) {
    if (!stream_ok(m, stream)) return CUDA_ERROR_INVALID_VALUE;
    return copy(m, nullptr, to, nullptr, from, bytes);
  });
}

CUresult cuMemsetD8_v2(CUdeviceptr to, unsigned char value, size_t count) {
  return context_call("cuMemsetD8_v2", [&](Memory& m, const json&, int) {
    if (find_device(m, to, count) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memset(reinterpret_cast<void*>(static_cast<uintptr_t>(to)), value, count);
    return CUDA_SUCCESS;
  });
}

CUresult cuStreamCreate(CUstream* stream, unsigned) {
  return context_call("cuStreamCreate", [&](Memory& m, const json&, int) {
    if (stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t handle = m.next_handle++;
    m.streams.insert(handle);
    *stream = reinterpret_cast<CUstream>(handle);
    return CUDA_SUCCESS;
  });
}

CUresult cuStreamDestroy_v2(CUstream stream) {
  return context_call("cuStreamDestroy_v2", [&](Memory& m, const json&, int) {
    return m.streams.erase(reinterpret_cast<uintptr_t>(stream)) == 0 ? CUDA_ERROR_INVALID_HANDLE
                                                                      : CUDA_SUCCESS;
  });
}

CUresult cuStreamSynchronize(CUstream stream) {
  return context_call("cuStreamSynchronize", [&](Memory& m, const json&, int) {
    return stream_ok(m, stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

CUresult cuEventCreate(CUevent* event, unsigned) {
  return context_call("cuEventCreate", [&](Memory& m, const json&, int) {
    if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t handle = m.next_handle++;
    m.event_handles.insert(handle);
    *event = reinterpret_cast<CUevent>(handle);
    return CUDA_SUCCESS;
  });
}

CUresult cuEventDestroy_v2(CUevent event) {
  return context_call("cuEventDestroy_v2", [&](Memory& m, const json&, int) {
    auto handle = reinterpret_cast<uintptr_t>(event);
    if (m.event_handles.erase(handle) == 0) return CUDA_ERROR_INVALID_HANDLE;
    m.events.erase(handle);
    return CUDA_SUCCESS;
  });
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  return context_call("cuEventRecord", [&](Memory& m, const json&, int) {
    auto handle = reinterpret_cast<uintptr_t>(event);
    if (m.event_handles.count(handle) == 0 || !stream_ok(m, stream)) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    m.events[handle] = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
  });
}

CUresult cuEventQuery(CUevent event) {
  return context_call("cuEventQuery", [&](Memory& m, const json&, int) {
    return m.event_handles.count(reinterpret_cast<uintptr_t>(event)) == 0
               ? CUDA_ERROR_INVALID_HANDLE
               : CUDA_SUCCESS;
  });
}

CUresult cuEventSynchronize(CUevent event) {
  return context_call("cuEventSynchronize", [&](Memory& m, const json&, int) {
    return m.event_handles.count(reinterpret_cast<uintptr_t>(event)) == 0
               ? CUDA_ERROR_INVALID_HANDLE
               : CUDA_SUCCESS;
  });
}

CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start, CUevent end) {
  return context_call("cuEventElapsedTime_v2", [&](Memory& m, const json&, int) {
    if (milliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto a = m.events.find(reinterpret_cast<uintptr_t>(start));
    auto b = m.events.find(reinterpret_cast<uintptr_t>(end));
    if (a == m.events.end() || b == m.events.end()) return CUDA_ERROR_INVALID_HANDLE;
    *milliseconds = std::chrono::duration<float, std::milli>(b->second - a->second).count();
    return CUDA_SUCCESS;
  });
}

// Test hook: live objects of one kind ("device", "host", "registered", "streams", "events"),
// or -1 for an unknown kind. A loader that cleans up after itself leaves all of them at 0.
long sparkdoc_fake_cuda_live(const char* kind) {
  Memory& m = memory();
  std::lock_guard lock(m.mutex);
  std::string_view k = kind == nullptr ? "" : kind;
  if (k == "device") return static_cast<long>(m.device.size());
  if (k == "host") return static_cast<long>(m.host.size());
  if (k == "registered") return static_cast<long>(m.registered.size());
  if (k == "streams") return static_cast<long>(m.streams.size());
  if (k == "events") return static_cast<long>(m.event_handles.size());
  return -1;
}

// Test hook: the bytes of the device allocation that holds `pointer`, through `size` bytes;
// nullptr when that range is not inside one live allocation.
const void* sparkdoc_fake_cuda_device_bytes(unsigned long long pointer, size_t size) {
  Memory& m = memory();
  std::lock_guard lock(m.mutex);
  if (find_device(m, pointer, size) == nullptr) return nullptr;
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(pointer));
}

// Test hook: how many calls of `symbol` ("cuMemcpyDtoH_v2") reached a context so far.
long sparkdoc_fake_cuda_calls(const char* symbol) {
  Memory& m = memory();
  std::lock_guard lock(m.mutex);
  auto it = m.calls.find(std::string_view(symbol == nullptr ? "" : symbol));
  return it == m.calls.end() ? 0 : it->second;
}

// Test hook: the primary context's reference count on `device` (-1 for a device out of range).
int sparkdoc_fake_cuda_primary_retained(int device) {
  if (device < 0 || device >= kMaxDevices) return -1;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.primary_retained[static_cast<size_t>(device)];
}

}  // extern "C"
