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
  X(kOptional, cuda::CUresult, mem_get_info, (std::size_t*, std::size_t*), "cuMemGetInfo_v2")

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

// NOT_SUPPORTED → kNotSupported, NOT_PERMITTED → kNoPermission, NO_DEVICE → kAbsent,
// anything else → kError.
Why cuda_why(cuda::CUresult code);

}  // namespace sparkdoc::gpu
