#include "load/device.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace sparkdoc::load {
namespace {

using gpu::cuda::CUDA_SUCCESS;

// The entry points a load needs beyond cuInit/cuDeviceGet (which the table requires).
std::vector<std::string> missing_entry_points(const gpu::CudaEntryPoints& api) {
  std::vector<std::string> missing;
  auto need = [&](const auto& symbol) {
    if (!symbol) missing.push_back(symbol.missing());
  };
  need(api.device_primary_ctx_retain);
  need(api.device_primary_ctx_release);
  need(api.ctx_set_current);
  need(api.ctx_get_current);
  need(api.mem_alloc);
  need(api.mem_free);
  need(api.memcpy_htod_async);
  need(api.stream_create);
  need(api.stream_destroy);
  need(api.stream_synchronize);
  need(api.event_create);
  need(api.event_destroy);
  need(api.event_record);
  need(api.event_synchronize);
  bool can_register = api.mem_host_register && api.mem_host_unregister;
  bool can_host_alloc = api.mem_host_alloc && api.mem_free_host;
  if (!can_register && !can_host_alloc) {
    missing.push_back("neither cuMemHostRegister_v2 nor cuMemHostAlloc is exported");
  }
  return missing;
}

}  // namespace

Outcome<std::unique_ptr<DeviceSession>> DeviceSession::open(const gpu::Cuda& cuda, int ordinal) {
  const auto& api = cuda.api();
  auto missing = missing_entry_points(api);
  if (!missing.empty()) {
    return failure(Fault::kNoCuda,
                   join(missing, "; ") + ": this CUDA driver cannot run the loader");
  }
  std::unique_ptr<DeviceSession> session(new DeviceSession(cuda));
  session->ordinal_ = ordinal;
  if (auto ok = session->check(api.init(0), "cuInit"); !ok) return tl::unexpected(ok.error());
  if (auto ok = session->check(api.device_get(&session->device_, ordinal), "cuDeviceGet"); !ok) {
    return failure(ok.error().fault, fmt::format("GPU {}: {}", ordinal, ok.error().message));
  }
  gpu::cuda::CUcontext context = nullptr;
  if (auto ok = session->check(api.device_primary_ctx_retain(&context, session->device_),
                               "cuDevicePrimaryCtxRetain");
      !ok) {
    return tl::unexpected(ok.error());
  }
  session->context_ = context;
  return session;
}

DeviceSession::~DeviceSession() {
  if (context_ != nullptr) api().device_primary_ctx_release(device_);
}

Outcome<void> DeviceSession::make_current() const {
  return check(api().ctx_set_current(context_), "cuCtxSetCurrent");
}

Outcome<void> DeviceSession::check(gpu::cuda::CUresult code, std::string_view function) const {
  using namespace gpu::cuda;
  if (code == CUDA_SUCCESS) return {};
  Fault fault = Fault::kCuda;
  switch (code) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      fault = Fault::kOutOfMemory;
      break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      fault = Fault::kNoCuda;
      break;
    case CUDA_ERROR_NOT_PERMITTED:
      fault = Fault::kPermission;
      break;
    default:
      break;
  }
  return failure(fault, cuda_.error(code, function).message);
}

CurrentContext::CurrentContext(const DeviceSession& session) : session_(session) {
  const auto& api = session.api();
  if (api.ctx_get_current(&previous_) != CUDA_SUCCESS) previous_ = nullptr;
  if (previous_ == session.context()) return;
  status_ = session.make_current();
  restore_ = status_.has_value();
}

CurrentContext::~CurrentContext() {
  if (restore_) session_.api().ctx_set_current(previous_);
}

Outcome<PinnedBuffer> PinnedBuffer::allocate(const DeviceSession& session, uint64_t bytes) {
  const auto& api = session.api();
  PinnedBuffer out;
  out.session_ = &session;
  out.size_ = bytes;
  if (api.mem_host_register && api.mem_host_unregister) {
    void* memory = nullptr;
    if (::posix_memalign(&memory, 2u << 20, bytes) != 0) {
      return failure(Fault::kOutOfMemory,
                     fmt::format("cannot allocate {} bytes of staging memory", bytes));
    }
    // Huge pages where the kernel has them: fewer TLB misses for the kernel's copy into the
    // slot and fewer IOMMU entries for the device's reads out of it. Advice only.
    ::madvise(memory, bytes, MADV_HUGEPAGE);
    auto code = api.mem_host_register(memory, bytes, gpu::cuda::CU_MEMHOSTREGISTER_PORTABLE);
    if (code == CUDA_SUCCESS) {
      out.data_ = static_cast<unsigned char*>(memory);
      out.registered_ = true;
      return out;
    }
    std::free(memory);
    // Some drivers (unified-memory devices among them) refuse to register; cuMemHostAlloc
    // still gives page-locked memory there.
    if (!api.mem_host_alloc) {
      auto refused = session.check(code, "cuMemHostRegister_v2");
      return tl::unexpected(refused.error());
    }
  }
  void* memory = nullptr;
  if (auto ok =
          session.check(api.mem_host_alloc(&memory, bytes, gpu::cuda::CU_MEMHOSTALLOC_PORTABLE),
                        "cuMemHostAlloc");
      !ok) {
    return tl::unexpected(ok.error());
  }
  out.data_ = static_cast<unsigned char*>(memory);
  return out;
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept {
  *this = std::move(other);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    session_ = std::exchange(other.session_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    registered_ = std::exchange(other.registered_, false);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  reset();
}

void PinnedBuffer::reset() {
  if (data_ == nullptr) return;
  CurrentContext current(*session_);
  const auto& api = session_->api();
  if (registered_) {
    api.mem_host_unregister(data_);
    std::free(data_);
  } else {
    api.mem_free_host(data_);
  }
  data_ = nullptr;
}

Outcome<DeviceBuffer> DeviceBuffer::allocate(const DeviceSession& session, uint64_t bytes) {
  DeviceBuffer out;
  out.session_ = &session;
  if (bytes == 0) return out;
  CurrentContext current(session);
  if (!current.status()) return tl::unexpected(current.status().error());
  gpu::cuda::CUdeviceptr address = 0;
  if (auto ok = session.check(session.api().mem_alloc(&address, bytes), "cuMemAlloc_v2"); !ok) {
    return tl::unexpected(ok.error());
  }
  out.address_ = address;
  out.size_ = bytes;
  return out;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept {
  *this = std::move(other);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    session_ = std::exchange(other.session_, nullptr);
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  reset();
}

void DeviceBuffer::reset() {
  if (address_ == 0) return;
  CurrentContext current(*session_);
  session_->api().mem_free(address_);
  address_ = 0;
}

}  // namespace sparkdoc::load
