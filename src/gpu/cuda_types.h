// The part of the CUDA driver API (libcuda) that sparkdoc uses, mirrored from cuda.h (CUDA 13.0)
// so that no toolkit is needed to build. Spellings follow cuda.h; only what the entry-point
// table in cuda_api.h and the in-tree fake library use is here.
#pragma once

#include <cstddef>

namespace sparkdoc::gpu::cuda {

// cuda.h, CUDA 13.0: typedef enum cudaError_enum {...} CUresult. A code not listed here is
// still passed through; cuGetErrorName names it.
enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_OPERATING_SYSTEM = 304,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_UNKNOWN = 999,
};

// cuda.h, CUDA 13.0: typedef int CUdevice_v1; typedef CUdevice_v1 CUdevice.
using CUdevice = int;

// cuda.h, CUDA 13.0: typedef struct CUctx_st *CUcontext. Opaque; only the driver looks inside.
struct CUctx_st;
using CUcontext = CUctx_st*;

// cuda.h, CUDA 13.0: typedef unsigned long long CUdeviceptr_v2 (64-bit), typedef ... CUdeviceptr.
using CUdeviceptr = unsigned long long;

// cuda.h, CUDA 13.0: typedef struct CUstream_st *CUstream; typedef struct CUevent_st *CUevent.
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;

// cuda.h, CUDA 13.0: flags of cuMemHostAlloc, cuMemHostRegister, cuStreamCreate, cuEventCreate.
inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
inline constexpr unsigned CU_MEMHOSTALLOC_WRITECOMBINED = 0x04;
inline constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 0x01;
inline constexpr unsigned CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;

// cuda.h, CUDA 13.0: CUdevice_attribute, the values sparkdoc reads.
enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
};

}  // namespace sparkdoc::gpu::cuda
