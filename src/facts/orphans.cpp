#include "facts/orphans.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"

namespace sparkdoc::facts {
namespace {

void add_unified_advice(OrphanEstimate& e) {
  e.advice = {
      "remove the dead containers and processes of earlier runs (`docker ps -a`, then "
      "`docker rm -f NAME`): the driver gives their memory back only when a new CUDA context "
      "starts (000 §6)",
      "then run `sparkdoc clean --yes`: its fresh CUDA context lets the driver reclaim the "
      "orphaned allocations",
      "if the figure stays, reboot: reloading nvidia_uvm fails in CUDA forward-compatibility "
      "mode, so a reboot is the only other way (000 §6)",
  };
}

Reading<OrphanEstimate> unified_estimate(const GpuProcessTotal& gpu, const sys::MemInfo& m) {
  OrphanEstimate e;
  e.unified = true;
  e.allowance_bytes = kUnifiedUnaccountedAllowanceBytes;
  e.in_use_bytes = sub_clamped(m.mem_total_bytes, m.mem_free_bytes);
  e.hugepages_free_bytes = m.hugepages_free * m.hugepage_size_bytes;
  e.itemised_bytes = m.anon_pages_bytes + m.buffers_bytes + m.cached_bytes + m.swap_cached_bytes +
                     m.slab_bytes + m.kernel_stack_bytes + m.page_tables_bytes +
                     e.hugepages_free_bytes;
  e.processes_known = gpu.listed.ok();
  e.processes_bytes = gpu.bytes;
  int64_t remainder =
      as_signed(e.in_use_bytes) - as_signed(e.itemised_bytes) - as_signed(e.processes_bytes);
  e.unaccounted_bytes = std::max<int64_t>(remainder, 0);
  e.likely = static_cast<uint64_t>(e.unaccounted_bytes) > e.allowance_bytes;
  e.formula = fmt::format(
      "in use {} (MemTotal - MemFree) - itemised {} (anonymous, page cache, swap cache, kernel, "
      "free hugepages) - NVML processes {} = {}",
      format_gb(e.in_use_bytes), format_gb(e.itemised_bytes), format_gb(e.processes_bytes),
      format_gb(e.unaccounted_bytes));
  if (m.slab_bytes == 0) {
    e.caveats.push_back(
        "Slab, KernelStack and PageTables are not in this snapshot, so the remainder includes "
        "the kernel's own memory (usually 1-3 GB)");
  }
  if (!e.processes_known) {
    e.caveats.push_back("NVML's process list was not read (" + gpu.listed.why_not() +
                        "), so the remainder includes live GPU processes too");
  }
  if (m.hugepages_total > m.hugepages_free) {
    e.caveats.push_back(fmt::format(
        "{} of hugepages in use count in the remainder: CUDA allocates from the pool when "
        "hugepages are configured, but other programs can too",
        format_gb((m.hugepages_total - m.hugepages_free) * m.hugepage_size_bytes)));
  }
  if (e.likely) add_unified_advice(e);
  return e;
}

Reading<OrphanEstimate> discrete_estimate(const Snapshot& s, bool in_container) {
  if (!s.gpu.nvml.ok()) {
    return Reading<OrphanEstimate>::absent(Why::kAbsent, "NVML: " + s.gpu.nvml.why_not());
  }
  OrphanEstimate e;
  e.allowance_bytes = kDiscreteUnaccountedAllowanceBytes;
  bool any = false;
  std::vector<std::string> unread;
  for (const auto& d : s.gpu.nvml->devices) {
    if (!d.memory.ok() || !d.processes.ok()) {
      unread.push_back(fmt::format("GPU {}: {}", d.index,
                                   !d.memory.ok() ? d.memory.why_not() : d.processes.why_not()));
      continue;
    }
    any = true;
    uint64_t listed = 0;
    for (const auto& p : *d.processes) listed += p.used_bytes.value_or(0);
    e.processes_bytes += listed;
    e.in_use_bytes += d.memory->used_bytes;
    int64_t remainder = as_signed(d.memory->used_bytes) - as_signed(listed);
    uint64_t held = static_cast<uint64_t>(std::max<int64_t>(remainder, 0));
    e.unaccounted_bytes += as_signed(held);
    if (held > e.allowance_bytes) e.likely = true;
    e.device_lines.push_back(fmt::format("GPU {}: used {} - processes {} = {}", d.index,
                                         format_gb(d.memory->used_bytes), format_gb(listed),
                                         format_gb(held)));
    if (in_container && d.processes->empty() && d.memory->used_bytes > e.allowance_bytes) {
      e.caveats.push_back(fmt::format(
          "GPU {}: NVML lists no processes inside this container (its PIDs are the host's), so "
          "memory of live processes elsewhere looks unaccounted",
          d.index));
    }
  }
  if (!any) {
    if (s.gpu.nvml->devices.empty()) {
      return Reading<OrphanEstimate>::absent(Why::kAbsent, "NVML lists no devices");
    }
    return Reading<OrphanEstimate>::absent(Why::kNotSupported, join(unread, "; "));
  }
  for (const auto& u : unread) e.caveats.push_back("not counted: " + u);
  e.formula = fmt::format("NVML used {} - NVML processes {} = {}", format_gb(e.in_use_bytes),
                          format_gb(e.processes_bytes), format_gb(e.unaccounted_bytes));
  if (e.likely) {
    e.advice = {
        "find what still holds the device: `fuser -v /dev/nvidia*` lists processes that outlived "
        "their run (children of a killed job, another container's processes)",
        "stop them; if nothing holds the device and the memory stays used, reset the GPU "
        "(`nvidia-smi -r`, nothing may be running) or reboot",
    };
  }
  return e;
}

}  // namespace

GpuProcessTotal gpu_process_total(const Snapshot& s) {
  GpuProcessTotal t;
  if (!s.gpu.nvml.ok()) {
    t.listed = Reading<bool>(s.gpu.nvml.missing());
    return t;
  }
  std::vector<std::string> unread;
  bool any_listed = false;
  for (const auto& d : s.gpu.nvml->devices) {
    if (!d.processes.ok()) {
      unread.push_back(fmt::format("GPU {}: {}", d.index, d.processes.why_not()));
      continue;
    }
    any_listed = true;
    for (const auto& p : *d.processes) {
      if (p.used_bytes.ok()) t.bytes += *p.used_bytes;
    }
  }
  if (any_listed) {
    t.listed = true;
  } else if (s.gpu.nvml->devices.empty()) {
    t.listed = Reading<bool>::absent(Why::kAbsent, "NVML lists no devices");
  } else {
    t.listed = Reading<bool>::absent(Why::kNotSupported, join(unread, "; "));
  }
  return t;
}

Reading<OrphanEstimate> estimate_orphans(const Snapshot& s, const Platform& platform) {
  if (!platform.unified_memory()) return discrete_estimate(s, detect_container(s).inside);
  if (!s.meminfo.ok()) {
    return Reading<OrphanEstimate>::absent(s.meminfo.missing().why,
                                           "/proc/meminfo: " + s.meminfo.why_not());
  }
  return unified_estimate(gpu_process_total(s), *s.meminfo);
}

}  // namespace sparkdoc::facts
