#include "mem/account.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"
#include "facts/memory.h"
#include "facts/platform.h"

namespace sparkdoc::mem {
namespace {

// Desktop processes that keep small GPU contexts on a Spark's desktop session (nvidia-smi
// lists Xorg and gnome-shell there, reference §2.1). Matched on comm, which the kernel cuts at
// 15 characters ("gnome-remote-de").
constexpr std::array<std::string_view, 9> kDesktopComms = {
    "Xorg",     "Xwayland",    "gnome-shell", "gnome-remote-de", "kwin_wayland",
    "kwin_x11", "plasmashell", "mutter",      "weston"};

constexpr std::string_view kRemoteDesktop = "gnome-remote-desktop";

bool desktop_comm(std::string_view comm) {
  for (auto d : kDesktopComms) {
    if (comm == d) return true;
  }
  return false;
}

Role role_of(std::string_view comm, std::string_view server_kind) {
  if (server_kind == kRemoteDesktop) return Role::kDesktop;
  if (!server_kind.empty()) return Role::kServer;
  if (desktop_comm(comm)) return Role::kDesktop;
  return Role::kOther;
}

int64_t as_signed(uint64_t v) {
  return static_cast<int64_t>(
      std::min<uint64_t>(v, static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
}

uint64_t sub_clamped(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

HostMemory host_from(const sys::MemInfo& m) {
  HostMemory host;
  host.total_bytes = m.mem_total_bytes;
  host.free_bytes = m.mem_free_bytes;
  host.available_bytes = m.mem_available_bytes;
  // The same page-cache figures G3 reports: the one definition (facts/memory.h).
  facts::PageCache cache = facts::page_cache(m);
  host.page_cache_bytes = cache.bytes;
  host.reclaimable_cache_bytes = cache.reclaimable_bytes;
  host.shmem_bytes = m.shmem_bytes;
  host.dirty_bytes = m.dirty_bytes + m.writeback_bytes;
  host.anon_bytes = m.anon_pages_bytes;
  host.slab_bytes = m.slab_bytes;
  host.slab_reclaimable_bytes = m.slab_reclaimable_bytes;
  host.kernel_stack_bytes = m.kernel_stack_bytes;
  host.page_tables_bytes = m.page_tables_bytes;
  host.kernel_recorded = m.slab_bytes > 0;
  host.hugepages_total = m.hugepages_total;
  host.hugepages_free = m.hugepages_free;
  host.hugepage_size_bytes = m.hugepage_size_bytes;
  host.swap_total_bytes = m.swap_total_bytes;
  host.swap_free_bytes = m.swap_free_bytes;
  host.swap_cached_bytes = m.swap_cached_bytes;
  return host;
}

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

Reading<OrphanEstimate> unified_estimate(const MemReport& r, const sys::MemInfo& m) {
  OrphanEstimate e;
  e.unified = true;
  e.allowance_bytes = kUnifiedUnaccountedAllowanceBytes;
  e.in_use_bytes = sub_clamped(m.mem_total_bytes, m.mem_free_bytes);
  e.hugepages_free_bytes = m.hugepages_free * m.hugepage_size_bytes;
  e.itemised_bytes = m.anon_pages_bytes + m.buffers_bytes + m.cached_bytes + m.swap_cached_bytes +
                     m.slab_bytes + m.kernel_stack_bytes + m.page_tables_bytes +
                     e.hugepages_free_bytes;
  e.processes_known = r.processes_listed.ok();
  e.processes_bytes = r.processes_bytes;
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
    e.caveats.push_back("NVML's process list was not read (" + why_not(r.processes_listed) +
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
    return Reading<OrphanEstimate>::absent(Why::kAbsent, "NVML: " + why_not(s.gpu.nvml));
  }
  OrphanEstimate e;
  e.allowance_bytes = kDiscreteUnaccountedAllowanceBytes;
  bool any = false;
  std::vector<std::string> unread;
  for (const auto& d : s.gpu.nvml->devices) {
    if (!d.memory.ok() || !d.processes.ok()) {
      unread.push_back(fmt::format("GPU {}: {}", d.index,
                                   !d.memory.ok() ? why_not(d.memory) : why_not(d.processes)));
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

std::string_view role_key(Role role) {
  switch (role) {
    case Role::kServer:
      return "server";
    case Role::kDesktop:
      return "desktop";
    case Role::kOther:
      return "other";
  }
  return "other";
}

MemReport account(const Snapshot& s, const facts::Platform& platform, std::string source) {
  MemReport r;
  r.sparkdoc_version = s.sparkdoc_version;
  r.taken_at = s.taken_at;
  r.hostname = s.host.hostname.value_or("");
  r.source = std::move(source);
  r.platform = platform;
  r.unified = platform.unified_memory();
  r.headroom = facts::compute_headroom(s, platform);
  if (s.meminfo.ok()) {
    r.host = host_from(*s.meminfo);
  } else {
    r.host = Reading<HostMemory>(s.meminfo.missing());
  }
  r.pressure = s.memory_pressure;
  bool in_container = facts::detect_container(s).inside;

  // The process scan, by PID.
  std::map<int, const sys::GpuHolder*> holders;
  std::map<int, const sys::KnownServer*> servers;
  if (s.processes.ok()) {
    for (const auto& h : s.processes->gpu_holders) holders[h.pid] = &h;
    for (const auto& k : s.processes->servers) servers[k.pid] = &k;
  }

  std::set<uint32_t> nvml_pids;
  if (s.gpu.nvml.ok()) {
    std::vector<GpuMemory> gpus;
    std::vector<std::string> unread;
    bool any_listed = false;
    for (const auto& d : s.gpu.nvml->devices) {
      gpus.push_back(GpuMemory{d.index, d.name.value_or(""), d.memory});
      if (!d.processes.ok()) {
        unread.push_back(fmt::format("GPU {}: {}", d.index, why_not(d.processes)));
        continue;
      }
      any_listed = true;
      std::vector<ProcessMemory> on_device;
      for (const auto& p : *d.processes) {
        ProcessMemory pm;
        pm.pid = p.pid;
        pm.device = d.index;
        pm.type = p.type;
        if (p.used_bytes.ok()) {
          pm.used_bytes = *p.used_bytes;
          r.processes_bytes += *p.used_bytes;
        } else {
          pm.note = why_not(p.used_bytes);
        }
        int pid = static_cast<int>(p.pid);
        if (auto h = holders.find(pid); h != holders.end()) {
          pm.in_scan = true;
          pm.comm = h->second->comm;
          pm.cmdline = h->second->cmdline;
        }
        if (auto k = servers.find(pid); k != servers.end()) {
          pm.in_scan = true;
          pm.server_kind = k->second->kind;
          if (pm.cmdline.empty()) pm.cmdline = k->second->cmdline;
        }
        pm.role = role_of(pm.comm, pm.server_kind);
        nvml_pids.insert(p.pid);
        on_device.push_back(std::move(pm));
      }
      std::sort(on_device.begin(), on_device.end(),
                [](const auto& a, const auto& b) { return a.pid < b.pid; });
      for (auto& pm : on_device) r.processes.push_back(std::move(pm));
    }
    r.gpus = std::move(gpus);
    if (any_listed) {
      r.processes_listed = true;
    } else if (s.gpu.nvml->devices.empty()) {
      r.processes_listed = Reading<bool>::absent(Why::kAbsent, "NVML lists no devices");
    } else {
      r.processes_listed = Reading<bool>::absent(Why::kNotSupported, join(unread, "; "));
    }
  } else {
    r.gpus = Reading<std::vector<GpuMemory>>(s.gpu.nvml.missing());
    r.processes_listed = Reading<bool>(s.gpu.nvml.missing());
  }

  if (!s.processes.ok()) {
    r.unlisted_holders = Reading<std::vector<UnlistedHolder>>(s.processes.missing());
  } else if (!r.processes_listed.ok()) {
    r.unlisted_holders = Reading<std::vector<UnlistedHolder>>::absent(
        Why::kAbsent, "NVML's process list: " + why_not(r.processes_listed));
  } else {
    std::vector<UnlistedHolder> unlisted;
    for (const auto& h : s.processes->gpu_holders) {
      if (nvml_pids.count(static_cast<uint32_t>(h.pid)) > 0) continue;
      UnlistedHolder u;
      u.pid = h.pid;
      u.comm = h.comm;
      u.cmdline = h.cmdline;
      u.devices = h.devices;
      u.cuda = std::find(h.devices.begin(), h.devices.end(), "/dev/nvidia-uvm") != h.devices.end();
      if (auto k = servers.find(h.pid); k != servers.end()) u.server_kind = k->second->kind;
      u.role = role_of(u.comm, u.server_kind);
      unlisted.push_back(std::move(u));
    }
    r.unlisted_holders = std::move(unlisted);
  }

  if (s.processes.ok()) {
    std::set<int> seen;
    for (const auto& k : s.processes->servers) {
      if (k.kind == kRemoteDesktop && seen.insert(k.pid).second) r.stoppable.push_back(k);
    }
    for (const auto& h : s.processes->gpu_holders) {
      if (h.comm.starts_with("gnome-remote-de") && seen.insert(h.pid).second) {
        r.stoppable.push_back(sys::KnownServer{h.pid, std::string(kRemoteDesktop), h.cmdline});
      }
    }
  }

  if (r.unified) {
    if (s.meminfo.ok()) {
      r.orphans = unified_estimate(r, *s.meminfo);
    } else {
      r.orphans = Reading<OrphanEstimate>::absent(s.meminfo.missing().why,
                                                  "/proc/meminfo: " + why_not(s.meminfo));
    }
  } else {
    r.orphans = discrete_estimate(s, in_container);
  }

  if (in_container && !r.processes.empty()) {
    r.notes.push_back(
        "inside a container: NVML reports host PIDs, so the names above are right only with "
        "--pid=host");
  }
  if (s.processes.ok() && s.processes->fd_dirs_unreadable > 0) {
    r.notes.push_back(fmt::format(
        "{} processes' open files could not be read (not root): holders among them are not "
        "listed",
        s.processes->fd_dirs_unreadable));
  }
  return r;
}

}  // namespace sparkdoc::mem
