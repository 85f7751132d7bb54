// Memory headroom, the figure G3 and the env report's headroom_gb stand on.
//
// Unified memory (reference §3.1, NVIDIA's DGX Spark known-issues note): when hugepages are
// configured, available = HugePages_Free x Hugepagesize and swap is ignored; otherwise
// available = MemAvailable + SwapFree. cudaMemGetInfo and NVML do not give this figure on GB10.
// From it we keep back an 8 GiB floor, because the driver's allocations start failing while
// MemAvailable still shows tens of GB (vLLM #54200: NV_ERR_NO_MEMORY at 22.5 GiB available;
// §3.4 recommends a floor of 8-16 GiB).
//
// Discrete GPUs: GPU 0's free memory from NVML. A single-device run sees one GPU (the first
// visible one), and a sum over devices would promise memory no one process can use. No floor:
// the UMA driver behaviour behind it does not apply to a dedicated framebuffer.
#include "facts/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/units.h"

namespace sparkdoc::facts {
PageCache page_cache(const sys::MemInfo& m) {
  PageCache c;
  c.bytes = sub_clamped(add_saturating(m.cached_bytes, m.buffers_bytes), m.shmem_bytes);
  c.reclaimable_bytes = sub_clamped(c.bytes, add_saturating(m.dirty_bytes, m.writeback_bytes));
  return c;
}

std::optional<uint64_t> page_cache_bytes(std::optional<uint64_t> cached,
                                         std::optional<uint64_t> buffers,
                                         std::optional<uint64_t> shmem) {
  if (!cached) return std::nullopt;
  return sub_clamped(add_saturating(*cached, buffers.value_or(0)), shmem.value_or(0));
}

std::optional<Headroom> compute_headroom(const Snapshot& s, const Platform& platform) {
  Headroom h;
  if (s.meminfo.ok()) {
    PageCache cache = page_cache(*s.meminfo);
    h.page_cache_bytes = cache.bytes;
    h.reclaimable_cache_bytes = cache.reclaimable_bytes;
  }

  if (platform.kind == PlatformKind::kDiscrete) {
    if (!s.gpu.nvml.ok() || s.gpu.nvml->devices.empty()) return std::nullopt;
    const gpu::Device& d = s.gpu.nvml->devices.front();
    if (!d.memory.ok()) return std::nullopt;
    h.available_bytes = d.memory->free_bytes;
    h.floor_bytes = 0;
    h.bytes = as_signed(h.available_bytes);
    h.without_cache_bytes = h.bytes;
    h.device = d.index;
    h.rule = fmt::format("GPU {} free memory from NVML ({} of {})", d.index,
                         format_gb(d.memory->free_bytes), format_gb(d.memory->total_bytes));
    return h;
  }

  if (!s.meminfo.ok()) return std::nullopt;
  const sys::MemInfo& m = *s.meminfo;
  h.floor_bytes = kHeadroomFloorBytes;
  if (m.hugepages_total > 0) {
    h.hugepages = true;
    h.available_bytes = mul_saturating(m.hugepages_free, m.hugepage_size_bytes);
    h.bytes = as_signed(h.available_bytes) - as_signed(h.floor_bytes);
    h.without_cache_bytes = h.bytes;
    h.rule = fmt::format("HugePages_Free {} x {} = {} (swap ignored) - {} floor", m.hugepages_free,
                         format_binary(m.hugepage_size_bytes), format_gb(h.available_bytes),
                         format_gb(h.floor_bytes));
    return h;
  }
  h.available_bytes = add_saturating(m.mem_available_bytes, m.swap_free_bytes);
  h.bytes = as_signed(h.available_bytes) - as_signed(h.floor_bytes);
  h.without_cache_bytes =
      as_signed(add_saturating(m.mem_free_bytes, m.swap_free_bytes)) - as_signed(h.floor_bytes);
  h.rule = fmt::format("MemAvailable {} + SwapFree {} - {} floor", format_gb(m.mem_available_bytes),
                       format_gb(m.swap_free_bytes), format_gb(h.floor_bytes));
  return h;
}

}  // namespace sparkdoc::facts
