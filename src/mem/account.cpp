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
        // A graphics context (NVML's graphics list) is a display client, not a training job,
        // even when the process scan could not name it.
        if (pm.role == Role::kOther && pm.type == "graphics") pm.role = Role::kDesktop;
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

  r.orphans = facts::estimate_orphans(s, platform);

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
