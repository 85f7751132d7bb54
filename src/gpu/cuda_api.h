// The CUDA driver API (libcuda) loaded with dlopen: the one list of entry points sparkdoc calls,
// and the loader.
//
// The library is libcuda.so.1, or the file named by SPARKDOC_CUDA_LIBRARY (tests point it at an
// in-tree fake). It is loaded once per process and never closed. Loading runs no CUDA code;
// cuInit is the probe's decision. After cuInit a forked child must exec before touching CUDA.
// Threading: the driver API is thread-safe, and a Cuda is immutable after load.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"
#include "gpu/cuda_types.h"
#include "gpu/dynamic_library.h"

namespace sparkdoc::gpu {

// X(need, return type, member, (parameter types), exported names, newest version first).
// The table grows by rows at its end; the primary-context and cuMemGetInfo rows serve the fresh
// context of `sparkdoc clean` (gpu/context.h). For entry points that have per-thread-stream
// variants (_ptsz, _ptds), list the plain name: that is what cuda.h binds without
// CUDA_API_PER_THREAD_DEFAULT_STREAM.
#define SPARKDOC_CUDA_ENTRY_POINTS(X)                                                              \
  X(kRequired, cuda::CUresult, driver_get_version, (int*), "cuDriverGetVersion")                  \
  X(kRequired, cuda::CUresult, init, (unsigned), "cuInit")                                         \
  X(kOptional, cuda::CUresult, get_error_name, (cuda::CUresult, const char**), "cuGetErrorName")   \
  X(kOptional, cuda::CUresult, get_error_string, (cuda::CUresult, const char**),                  \
    "cuGetErrorString")                                                                            \
  X(kRequired, cuda::CUresult, device_get_count, (int*), "cuDeviceGetCount")                      \
  X(kRequired, cuda::CUresult, device_get, (cuda::CUdevice*, int), "cuDeviceGet")                 \
  X(kOptional, cuda::CUresult, device_get_name, (char*, int, cuda::CUdevice), "cuDeviceGetName")  \
  X(kOptional, cuda::CUresult, device_get_attribute,                                               \
    (int*, cuda::CUdevice_attribute, cuda::CUdevice), "cuDeviceGetAttribute")                      \
  X(kOptional, cuda::CUresult, device_total_mem, (std::size_t*, cuda::CUdevice),                  \
    "cuDeviceTotalMem_v2")                                                                         \
  X(kOptional, cuda::CUresult, device_primary_ctx_retain, (cuda::CUcontext*, cuda::CUdevice),      \
    "cuDevicePrimaryCtxRetain")                                                                    \
  X(kOptional, cuda::CUresult, device_primary_ctx_release, (cuda::CUdevice),                       \
    "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease")                                   \
  X(kOptional, cuda::CUresult, ctx_push_current, (cuda::CUcontext), "cuCtxPushCurrent_v2")         \
  X(kOptional, cuda::CUresult, ctx_pop_current, (cuda::CUcontext*), "cuCtxPopCurrent_v2")          \
  X(kOptional, cuda::CUresult, mem_get_info, (std::size_t*, std::size_t*), "cuMemGetInfo_v2")      \
  /* Memory, copies, streams and events: `sparkdoc bw` and the checkpoint loader. */            \
  X(kOptional, cuda::CUresult, ctx_set_current, (cuda::CUcontext), "cuCtxSetCurrent")              \
  X(kOptional, cuda::CUresult, ctx_get_current, (cuda::CUcontext*), "cuCtxGetCurrent")             \
  X(kOptional, cuda::CUresult, ctx_synchronize, (), "cuCtxSynchronize")                            \
  X(kOptional, cuda::CUresult, mem_alloc, (cuda::CUdeviceptr*, std::size_t), "cuMemAlloc_v2")      \
  X(kOptional, cuda::CUresult, mem_free, (cuda::CUdeviceptr), "cuMemFree_v2")                      \
  X(kOptional, cuda::CUresult, mem_host_alloc, (void**, std::size_t, unsigned), "cuMemHostAlloc")  \
  X(kOptional, cuda::CUresult, mem_free_host, (void*), "cuMemFreeHost")                            \
  X(kOptional, cuda::CUresult, mem_host_register, (void*, std::size_t, unsigned),                  \
    "cuMemHostRegister_v2")                                                                        \
  X(kOptional, cuda::CUresult, mem_host_unregister, (void*), "cuMemHostUnregister")                \
  X(kOptional, cuda::CUresult, memcpy_htod, (cuda::CUdeviceptr, const void*, std::size_t),         \
    "cuMemcpyHtoD_v2")                                                                             \
  X(kOptional, cuda::CUresult, memcpy_dtoh, (void*, cuda::CUdeviceptr, std::size_t),               \
    "cuMemcpyDtoH_v2")                                                                             \
  X(kOptional, cuda::CUresult, memcpy_dtod, (cuda::CUdeviceptr, cuda::CUdeviceptr, std::size_t),   \
    "cuMemcpyDtoD_v2")                                                                             \
  X(kOptional, cuda::CUresult, memcpy_htod_async,                                                  \
    (cuda::CUdeviceptr, const void*, std::size_t, cuda::CUstream), "cuMemcpyHtoDAsync_v2")         \
  X(kOptional, cuda::CUresult, memcpy_dtoh_async,                                                  \
    (void*, cuda::CUdeviceptr, std::size_t, cuda::CUstream), "cuMemcpyDtoHAsync_v2")               \
  X(kOptional, cuda::CUresult, memcpy_dtod_async,                                                  \
    (cuda::CUdeviceptr, cuda::CUdeviceptr, std::size_t, cuda::CUstream), "cuMemcpyDtoDAsync_v2")   \
  X(kOptional, cuda::CUresult, memset_d8, (cuda::CUdeviceptr, unsigned char, std::size_t),         \
    "cuMemsetD8_v2")                                                                               \
  X(kOptional, cuda::CUresult, stream_create, (cuda::CUstream*, unsigned), "cuStreamCreate")       \
  X(kOptional, cuda::CUresult, stream_destroy, (cuda::CUstream), "cuStreamDestroy_v2")             \
  X(kOptional, cuda::CUresult, stream_synchronize, (cuda::CUstream), "cuStreamSynchronize")        \
  X(kOptional, cuda::CUresult, event_create, (cuda::CUevent*, unsigned), "cuEventCreate")          \
  X(kOptional, cuda::CUresult, event_destroy, (cuda::CUevent), "cuEventDestroy_v2")                \
  X(kOptional, cuda::CUresult, event_record, (cuda::CUevent, cuda::CUstream), "cuEventRecord")     \
  X(kOptional, cuda::CUresult, event_query, (cuda::CUevent), "cuEventQuery")                       \
  X(kOptional, cuda::CUresult, event_synchronize, (cuda::CUevent), "cuEventSynchronize")           \
  X(kOptional, cuda::CUresult, event_elapsed_time, (float*, cuda::CUevent, cuda::CUevent),         \
    "cuEventElapsedTime_v2", "cuEventElapsedTime")

struct CudaEntryPoints {
#define SPARKDOC_CUDA_MEMBER(need, ret, member, params, ...) Symbol<ret params> member;
  SPARKDOC_CUDA_ENTRY_POINTS(SPARKDOC_CUDA_MEMBER)
#undef SPARKDOC_CUDA_MEMBER
};

class Cuda {
 public:
  static constexpr const char* kSoname = "libcuda.so.1";
  static constexpr const char* kLibraryEnv = "SPARKDOC_CUDA_LIBRARY";

  // Opens `name` (a soname or a path) and binds the table. Absent when the file is not there,
  // with "libcuda.so.1 not found: no NVIDIA driver installed ..." for the soname.
  // The library stays mapped for the life of the process, whatever becomes of the result.
  static Result<Cuda> load(const std::string& name);
  // The process-wide instance: SPARKDOC_CUDA_LIBRARY or the soname, loaded on first use.
  static const Result<Cuda>& instance();

  const CudaEntryPoints& api() const { return api_; }
  // The file that was loaded.
  const std::string& library() const { return library_; }

  // "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", from cuGetErrorName and
  // cuGetErrorString; "CUresult 123" when the driver cannot name the code.
  std::string describe(cuda::CUresult code) const;
  // The failure `function` reported with `code`: Why per cuda_why, and a message naming the
  // function, the code's name and number, and its description.
  Error error(cuda::CUresult code, std::string_view function) const;

 private:
  std::string error_name(cuda::CUresult code) const;
  std::string error_text(cuda::CUresult code) const;

  CudaEntryPoints api_;
  std::string library_;
};

// Calls the entry point `fn` with `args`: not_supported (the symbol's missing text) when the
// driver does not export it, Cuda::error when it answers anything but CUDA_SUCCESS.
template <class Sig, class... Args>
Result<void> cuda_call(const Cuda& cuda, const Symbol<Sig>& fn, Args... args) {
  if (!fn) return fail(Why::kNotSupported, fn.missing());
  cuda::CUresult code = fn(args...);
  if (code != cuda::CUDA_SUCCESS) return tl::unexpected<Error>(cuda.error(code, fn.name()));
  return {};
}

// NOT_SUPPORTED → kNotSupported, NOT_PERMITTED → kNoPermission, NO_DEVICE → kAbsent,
// anything else → kError.
Why cuda_why(cuda::CUresult code);

}  // namespace sparkdoc::gpu
