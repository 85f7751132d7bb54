// G3 UMA OOM below 128 GB (002 G3; reference §3).
//
// Rule on unified memory, with headroom from facts::compute_headroom (MemAvailable + SwapFree, or
// free hugepages, minus an 8 GiB floor):
//   FAIL  headroom < need (--need): say the gap and what holds memory. The page cache is named
//         but not offered as the fix: MemAvailable already counts it as available, so dropping
//         it does not raise this headroom (it only stops the double count while loading).
//   WARN  headroom >= need, but MemFree + SwapFree - floor < need: the load only fits by
//         evicting page cache while it runs, which is where mmap'd safetensors and CUDA
//         allocations double-count and OOM (002 G3, 001). Dropping the cache first is the fix.
//   PASS  the need fits without touching the page cache.
//   INFO  no --need: available memory, page cache and headroom. On GB10 nvidia-smi and NVML
//         report no memory (NOT_SUPPORTED): /proc/meminfo is the source.
// On a discrete GPU: GPU 0's free memory against the need (FAIL/PASS), INFO without one.
// SKIP when /proc/meminfo (or on discrete, NVML memory) was not read.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/gpu_users.h"
#include "facts/memory.h"
#include "facts/platform.h"

namespace sparkdoc::checks::g3 {
namespace {

constexpr std::string_view kId = "G3";

// "GPU processes hold 12.3 GB (pid 4242 (vllm) 10.1 GB, pid 77 (python3) 2.2 GB)"; empty when
// NVML lists nothing with memory.
std::string gpu_holders_text(const Snapshot& s) {
  auto procs = facts::gpu_users(s);
  std::erase_if(procs, [](const facts::GpuUser& p) { return !p.used_bytes || *p.used_bytes == 0; });
  if (procs.empty()) return "";
  std::sort(procs.begin(), procs.end(),
            [](const auto& a, const auto& b) { return *a.used_bytes > *b.used_bytes; });
  uint64_t total = 0;
  for (const auto& p : procs) total += *p.used_bytes;
  std::vector<std::string> top;
  for (size_t i = 0; i < procs.size() && i < 3; ++i)
    top.push_back(facts::describe_gpu_user(procs[i]));
  if (procs.size() > 3) top.push_back(fmt::format("{} more", procs.size() - 3));
  return fmt::format("GPU processes hold {} ({})", format_gb(total), join(top, ", "));
}

Finding unified(const Snapshot& s, const Workload& w, const facts::Platform& p,
                const facts::Headroom& h) {
  const sys::MemInfo& m = *s.meminfo;
  std::vector<std::string> details{
      "rule: " + h.rule,
      fmt::format("MemTotal {}, MemFree {}, MemAvailable {}, "
                  "SwapFree {}",
                  format_gb(m.mem_total_bytes), format_gb(m.mem_free_bytes),
                  format_gb(m.mem_available_bytes), format_gb(m.swap_free_bytes)),
      fmt::format("page cache {} (Cached + Buffers - Shmem), {} "
                  "reclaimable after Dirty and Writeback",
                  format_gb(h.page_cache_bytes), format_gb(h.reclaimable_cache_bytes))};
  std::string holders = gpu_holders_text(s);
  if (!holders.empty()) details.push_back(holders);

  if (!w.need_bytes) {
    std::string source =
        h.hugepages
            ? fmt::format("{} in free hugepages", format_gb(h.available_bytes))
            : fmt::format("{} available (MemAvailable + SwapFree)", format_gb(h.available_bytes));
    std::string gb10 =
        p.kind == facts::PlatformKind::kDgxSpark
            ? "; nvidia-smi/NVML memory is not supported on GB10, so /proc/meminfo is the source"
            : "";
    return make_finding(
        kId, Verdict::kInfo,
        fmt::format("{}, page cache {} ({} reclaimable), headroom {} after "
                    "the {} safety floor{}",
                    source, format_gb(h.page_cache_bytes), format_gb(h.reclaimable_cache_bytes),
                    format_gb(h.bytes), format_binary(h.floor_bytes), gb10),
        details);
  }

  uint64_t need = *w.need_bytes;
  auto need_signed =
      static_cast<int64_t>(std::min<uint64_t>(need, std::numeric_limits<int64_t>::max()));
  if (h.bytes < need_signed) {
    int64_t gap = need_signed - h.bytes;
    std::string held = fmt::format("anonymous memory {}", format_gb(m.anon_pages_bytes));
    if (!holders.empty()) held = holders + ", " + held;
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("need {} but headroom is {} ({}): {} short; {}: stop what holds memory or "
                    "plan a smaller load (the page cache, {}, is already counted as available: "
                    "dropping it does not raise this figure)",
                    format_gb(need), format_gb(h.bytes), h.rule, format_gb(gap), held,
                    format_gb(h.page_cache_bytes)),
        details);
  }
  if (h.without_cache_bytes < need_signed) {
    int64_t taken = need_signed - std::max<int64_t>(h.without_cache_bytes, 0);
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{} of page cache would be taken from a {} budget "
                                    "(reclaimable: sparkdoc clean)",
                                    format_gb(taken), format_gb(h.bytes)),
                        details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("need {}, headroom {} ({}); fits without reclaiming page cache",
                                  format_gb(need), format_gb(h.bytes), h.rule),
                      details);
}

Finding discrete(const Snapshot& s, const Workload& w, const facts::Headroom& h) {
  const gpu::Device& d = s.gpu.nvml->devices.front();
  std::string name = d.name.ok() ? *d.name : "GPU";
  std::vector<std::string> details{"rule: " + h.rule};
  std::string holders = gpu_holders_text(s);
  if (!holders.empty()) details.push_back(holders);
  size_t count = s.gpu.nvml->devices.size();
  if (count > 1) {
    details.push_back(
        fmt::format("{} GPUs; judged on GPU {}, the one a single-device run uses", count, d.index));
  }
  std::string free_text =
      fmt::format("GPU {} ({}) has {} free of {}", d.index, name, format_gb(d.memory->free_bytes),
                  format_gb(d.memory->total_bytes));
  if (!w.need_bytes) {
    std::string cache = s.meminfo.ok()
                            ? fmt::format("; host page cache {} (host memory, not the GPU's)",
                                          format_gb(h.page_cache_bytes))
                            : "";
    return make_finding(kId, Verdict::kInfo, free_text + cache, details);
  }
  uint64_t need = *w.need_bytes;
  if (d.memory->free_bytes < need) {
    std::string held = holders.empty() ? "" : "; " + holders;
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("need {} but {}: {} short{}; stop other GPU processes or "
                    "shard the run across GPUs",
                    format_gb(need), free_text, format_gb(need - d.memory->free_bytes), held),
        details);
  }
  return make_finding(kId, Verdict::kPass, fmt::format("need {}; {}", format_gb(need), free_text),
                      details);
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& p) {
  if (p.kind == facts::PlatformKind::kDiscrete) {
    if (!s.gpu.nvml.ok()) {
      return make_finding(kId, Verdict::kSkip, "GPU memory not read: NVML " + s.gpu.nvml.reason());
    }
    if (s.gpu.nvml->devices.empty()) {
      return make_finding(kId, Verdict::kSkip, "GPU memory not read: NVML lists no devices");
    }
    const gpu::Device& d = s.gpu.nvml->devices.front();
    if (!d.memory.ok()) {
      return make_finding(kId, Verdict::kSkip,
                          fmt::format("GPU {} memory not read: {}", d.index, d.memory.reason()));
    }
    auto h = facts::compute_headroom(s, p);
    if (!h) return make_finding(kId, Verdict::kSkip, "GPU memory headroom could not be computed");
    return discrete(s, w, *h);
  }
  if (!s.meminfo.ok()) {
    return make_finding(kId, Verdict::kSkip, "/proc/meminfo not read: " + s.meminfo.reason());
  }
  if (p.kind == facts::PlatformKind::kNoGpu) {
    return make_finding(
        kId, Verdict::kSkip,
        fmt::format("no NVIDIA GPU could be read ({}); host MemAvailable {}",
                    join(p.evidence, "; "), format_gb(s.meminfo->mem_available_bytes)));
  }
  auto h = facts::compute_headroom(s, p);
  if (!h) return make_finding(kId, Verdict::kSkip, "memory headroom could not be computed");
  return unified(s, w, p, *h);
}

}  // namespace
}  // namespace sparkdoc::checks::g3

namespace sparkdoc::checks {

const CheckInfo& g3_uma_headroom() {
  static constexpr CheckInfo kInfo{
      .id = "G3",
      .title = "UMA OOM below 128 GB",
      .reads =
          "/proc/meminfo (MemAvailable, MemFree, SwapFree, Cached, Buffers, Shmem, Dirty, "
          "Writeback, HugePages); NVML per-process GPU memory; on discrete GPUs NVML free "
          "memory; --need",
      .symptom =
          "Out of memory while loading or training although nvidia-smi shows free memory, or "
          "shows \"Not Supported\" / [N/A] for memory; a load dies part way through the shards, "
          "or the box freezes",
      .cause =
          "On GB10 the GPU allocates from the same LPDDR5x as the CPU. During a load the page "
          "cache of mmap'd safetensors and the CUDA tensors made from them both count against "
          "that one pool, and the driver's allocations fail before MemAvailable reaches zero. "
          "nvidia-smi and cudaMemGetInfo do not show any of this.",
      .how_checked =
          "Applies NVIDIA's unified-memory rule: free hugepages when configured, else "
          "MemAvailable + SwapFree, minus an 8 GiB floor. Compares that with --need, and warns "
          "when the need fits only by evicting page cache in the middle of the load.",
      .fix =
          "Drop the page cache before a load (sync; echo 3 > /proc/sys/vm/drop_caches, or "
          "sparkdoc clean), stop other GPU users, and load without the double count: in the "
          "training script, `with sparkdoc.patch_transformers(device=\"cuda:0\"), "
          "sparkdoc.memory_guard(paths=[model_dir]):` around from_pretrained streams each shard "
          "to the GPU and drops its pages (pip install the sparkdoc wheel; docs/PYTHON.md), else "
          "low_cpu_mem_usage=True. Plan from /proc/meminfo rather than nvidia-smi.",
      .source = "002 G3",
      .keywords =
          "oom out of memory cuda nvidia-smi free memory n/a not supported page cache meminfo "
          "memavailable unified uma mmap safetensors load drop_caches headroom killed freeze "
          "128gb checkpoint shards 66",
      .run = &g3::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
