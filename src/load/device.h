// The loader's hold on one GPU: the device's primary context (the one the CUDA runtime and
// PyTorch use, so device pointers from torch are valid here), pinned staging memory, and device
// memory the loader allocates itself.
//
// Ownership: a DeviceSession retains the primary context and releases it when destroyed; the
// buffers below free themselves and must not outlive their session. Threading: a session may
// be used from any thread once make_current() was called on that thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "gpu/cuda_api.h"
#include "load/failure.h"

namespace sparkdoc::load {

class DeviceSession {
 public:
  // cuInit, cuDeviceGet(ordinal), cuDevicePrimaryCtxRetain. Errors name the failing call; a
  // driver library without the entry points the loader needs is kNoCuda.
  static Outcome<std::unique_ptr<DeviceSession>> open(const gpu::Cuda& cuda, int ordinal);
  ~DeviceSession();
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  const gpu::Cuda& cuda() const { return cuda_; }
  const gpu::CudaEntryPoints& api() const { return cuda_.api(); }
  int ordinal() const { return ordinal_; }
  gpu::cuda::CUcontext context() const { return context_; }

  // Makes the primary context current on the calling thread (cuCtxSetCurrent).
  Outcome<void> make_current() const;
  // The failure for `code` returned by `function` (kOutOfMemory, kNoCuda for a missing or
  // unusable device, else kCuda), or success.
  Outcome<void> check(gpu::cuda::CUresult code, std::string_view function) const;

 private:
  DeviceSession(const gpu::Cuda& cuda) : cuda_(cuda) {}

  const gpu::Cuda& cuda_;
  int ordinal_ = 0;
  gpu::cuda::CUdevice device_ = 0;
  gpu::cuda::CUcontext context_ = nullptr;
};

// Makes a session's context current for a scope and puts back whatever was current before.
class CurrentContext {
 public:
  explicit CurrentContext(const DeviceSession& session);
  ~CurrentContext();
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;
  const Outcome<void>& status() const { return status_; }

 private:
  const DeviceSession& session_;
  gpu::cuda::CUcontext previous_ = nullptr;
  bool restore_ = false;
  Outcome<void> status_;
};

// Page-locked host memory for staging, allocated once: page-aligned memory registered with
// cuMemHostRegister (cheap: registering 2 GiB took 0.12 s on the H200, reference §6.1), or
// cuMemHostAlloc where the driver refuses to register. Needs the session's context current.
class PinnedBuffer {
 public:
  static Outcome<PinnedBuffer> allocate(const DeviceSession& session, uint64_t bytes);
  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  ~PinnedBuffer();

  unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  void reset();

  const DeviceSession* session_ = nullptr;
  unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
  bool registered_ = false;  // else from cuMemHostAlloc
};

// Device memory from cuMemAlloc_v2 in the session's context (made current for the call, then
// put back), freed the same way when destroyed.
class DeviceBuffer {
 public:
  static Outcome<DeviceBuffer> allocate(const DeviceSession& session, uint64_t bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  uint64_t address() const { return address_; }
  uint64_t size() const { return size_; }

 private:
  void reset();

  const DeviceSession* session_ = nullptr;
  uint64_t address_ = 0;
  uint64_t size_ = 0;
};

}  // namespace sparkdoc::load
