#include "gpu/context.h"

#include <chrono>

namespace sparkdoc::gpu {
Result<ContextMemory> fresh_context_mem_info(const Cuda& cuda, int ordinal) {
  auto start = std::chrono::steady_clock::now();
  const CudaEntryPoints& api = cuda.api();
  if (auto ok = cuda_call(cuda, api.init, 0u); !ok) return tl::unexpected(ok.error());
  cuda::CUdevice device = 0;
  if (auto ok = cuda_call(cuda, api.device_get, &device, ordinal); !ok) {
    return tl::unexpected(ok.error());
  }
  cuda::CUcontext context = nullptr;
  if (auto ok = cuda_call(cuda, api.device_primary_ctx_retain, &context, device); !ok) {
    return tl::unexpected(ok.error());
  }
  // From here the retained context is released on every path, or it would stay alive (and
  // hold its memory) until the process exits.
  Result<ContextMemory> out = [&]() -> Result<ContextMemory> {
    if (auto ok = cuda_call(cuda, api.ctx_push_current, context); !ok) {
      return tl::unexpected(ok.error());
    }
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    auto info = cuda_call(cuda, api.mem_get_info, &free_bytes, &total_bytes);
    cuda::CUcontext popped = nullptr;
    auto pop = cuda_call(cuda, api.ctx_pop_current, &popped);
    if (!info) return tl::unexpected(info.error());
    if (!pop) return tl::unexpected(pop.error());
    ContextMemory m;
    m.ordinal = ordinal;
    m.free_bytes = free_bytes;
    m.total_bytes = total_bytes;
    return m;
  }();
  auto released = cuda_call(cuda, api.device_primary_ctx_release, device);
  if (!out) return out;
  if (!released) return tl::unexpected(released.error());
  out->elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sparkdoc::gpu
