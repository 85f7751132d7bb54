#include "clean/plan.h"

#include <fmt/format.h>

#include "clean/clock_step.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "tune/tunables.h"

namespace sparkdoc::clean {
namespace {

using mem::HostMemory;
using mem::MemReport;
using mem::OrphanEstimate;
using mem::ProcessMemory;
using mem::Role;
using mem::why_not;
using tune::kLoadMinFreeKbytes;
using tune::kLoadVfsCachePressure;
using tune::kSeedDefaultMinFreeKbytes;
using tune::kSeedDefaultVfsCachePressure;

std::string gb(uint64_t bytes) {
  return format_gb(bytes);
}

std::string count_of(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string who(const ProcessMemory& p) {
  std::string name = !p.server_kind.empty() ? p.server_kind
                     : !p.comm.empty()      ? p.comm
                                            : fmt::format("a {} context", p.type);
  std::string memory = p.used_bytes ? gb(*p.used_bytes) : std::string("memory n/a");
  return fmt::format("{} (pid {}, {}): {}", name, p.pid, role_key(p.role), memory);
}

Step make(StepId id, std::string title, StepState state, std::string detail) {
  Step s;
  s.id = id;
  s.title = std::move(title);
  s.state = state;
  s.detail = std::move(detail);
  return s;
}

Step holders_step(const MemReport& mem) {
  Step s = make(StepId::kHolders, "GPU holders not training", StepState::kInfo, "");
  if (!mem.processes_listed.ok()) {
    s.detail = "NVML's process list: " + why_not(mem.processes_listed);
    return s;
  }
  for (const auto& p : mem.processes) {
    if (p.role != Role::kOther) s.lines.push_back(who(p));
  }
  size_t others = 0;
  for (const auto& p : mem.processes) others += p.role == Role::kOther ? 1 : 0;
  if (s.lines.empty()) {
    s.detail = "none: no desktop or server process holds GPU memory";
  } else {
    s.detail = fmt::format(
        "{} {} GPU memory",
        count_of(s.lines.size(), "desktop or server process", "desktop or server processes"),
        s.lines.size() == 1 ? "holds" : "hold");
  }
  if (others > 0) {
    s.detail += fmt::format("; {}, perhaps training (see `sparkdoc mem`)",
                            count_of(others, "other process", "other processes"));
  }
  return s;
}

Step stop_step(const MemReport& mem, const CleanRequest& req) {
  Step s = make(StepId::kStopKnown, "stop known desktop services", StepState::kSkipped, "");
  if (mem.stoppable.empty()) {
    s.detail = "none running";
    return s;
  }
  std::vector<std::string> names;
  for (const auto& k : mem.stoppable) {
    std::string held;
    for (const auto& p : mem.processes) {
      if (static_cast<int>(p.pid) == k.pid && p.used_bytes) held = ", " + gb(*p.used_bytes);
    }
    names.push_back(fmt::format("{} (pid {}{})", k.kind, k.pid, held));
  }
  if (!req.stop_known) {
    s.detail = fmt::format("not asked: --stop-known stops {} (000 §6 step 1)", join(names, ", "));
    return s;
  }
  s.state = StepState::kWould;
  s.detail = fmt::format("stop {} with systemctl, as the user running it (000 §6 step 1)",
                         join(names, ", "));
  return s;
}

Step stale_step(const MemReport& mem) {
  Step s = make(StepId::kStaleHolders, "stale holders of /dev/nvidia*", StepState::kInfo, "");
  std::vector<std::string> parts;
  if (!mem.unlisted_holders.ok()) {
    parts.push_back("holders not compared (" + why_not(mem.unlisted_holders) + ")");
  } else {
    size_t cuda = 0;
    for (const auto& u : *mem.unlisted_holders) {
      std::string name = u.comm.empty() ? std::string("?") : u.comm;
      s.lines.push_back(fmt::format(
          "pid {} {}: {}", u.pid, name,
          u.cuda ? "CUDA context NVML does not list (another PID namespace, or a leftover)"
                 : "driver or NVML user, no CUDA context"));
      cuda += u.cuda ? 1 : 0;
    }
    parts.push_back(mem.unlisted_holders->empty()
                        ? std::string("none outside NVML's list")
                        : fmt::format("{} NVML does not list, {} with a CUDA context",
                                      count_of(mem.unlisted_holders->size(), "holder", "holders"),
                                      cuda));
  }
  if (mem.orphans.ok()) {
    const OrphanEstimate& e = *mem.orphans;
    if (e.likely) {
      parts.push_back(
          fmt::format("{} no live process accounts for (estimate, `sparkdoc mem`): remove the dead "
                      "containers first (`docker rm -f NAME`; sparkdoc removes none)",
                      format_gb(e.unaccounted_bytes)));
    } else {
      parts.push_back(fmt::format("{} unaccounted, within the normal {}",
                                  format_gb(e.unaccounted_bytes), gb(e.allowance_bytes)));
    }
  }
  s.detail = join(parts, "; ");
  return s;
}

Step drop_step(StepId id, const MemReport& mem) {
  bool second = id == StepId::kDropCachesAgain;
  Step s =
      make(id, second ? "second drop of caches" : "sync and drop caches", StepState::kWould, "");
  if (second) {
    s.detail =
        "sync, then 3 > /proc/sys/vm/drop_caches again: the fresh context's own cache "
        "(000 §6 step 5)";
  } else if (mem.host.ok() && mem.host->kernel_recorded) {
    s.detail = fmt::format(
        "sync, then 3 > /proc/sys/vm/drop_caches: about {} of page cache and {} of reclaimable "
        "slab to free",
        gb(mem.host->reclaimable_cache_bytes), gb(mem.host->slab_reclaimable_bytes));
  } else if (mem.host.ok()) {
    s.detail =
        fmt::format("sync, then 3 > /proc/sys/vm/drop_caches: about {} of page cache to free",
                    gb(mem.host->reclaimable_cache_bytes));
  } else {
    s.detail = "sync, then 3 > /proc/sys/vm/drop_caches";
  }
  return s;
}

Step vm_step(const Snapshot& snap, const CleanRequest& req) {
  Step s = make(StepId::kVmTuning, "vm tuning for the load window", StepState::kSkipped, "");
  auto edit = [](std::string_view path, const Reading<int64_t>& now, int64_t target) {
    ValueEdit e;
    e.path = std::string(path);
    if (now.ok()) e.old_value = *now;
    e.new_value = target;
    e.journaled = true;
    return e;
  };
  s.edits = {edit(tune::tunable_info(tune::Tunable::kMinFreeKbytes).path, snap.vm.min_free_kbytes,
                  kLoadMinFreeKbytes),
             edit(tune::tunable_info(tune::Tunable::kVfsCachePressure).path,
                  snap.vm.vfs_cache_pressure, kLoadVfsCachePressure)};
  bool already = true;
  for (const auto& e : s.edits) already = already && e.old_value == e.new_value;
  if (!req.tune_vm) {
    s.edits.clear();
    if (already) {
      s.detail = fmt::format(
          "not asked; min_free_kbytes and vfs_cache_pressure are already at the load-window "
          "values {} and {} (the seed's defaults are {} and {}: `sparkdoc clean --restore` "
          "puts back what sparkdoc changed)",
          kLoadMinFreeKbytes, kLoadVfsCachePressure, kSeedDefaultMinFreeKbytes,
          kSeedDefaultVfsCachePressure);
    } else {
      s.detail = fmt::format(
          "not asked: --tune-vm sets min_free_kbytes {} and vfs_cache_pressure {} for the load "
          "(000 §6), journaled; `sparkdoc clean --restore` puts them back",
          kLoadMinFreeKbytes, kLoadVfsCachePressure);
    }
    return s;
  }
  s.state = StepState::kWould;
  s.detail = already ? std::string("already at the load-window values; nothing to change")
                     : std::string(
                           "old values journaled first; `sparkdoc clean --restore` puts "
                           "them back after the load");
  return s;
}

Step swap_step(const MemReport& mem, const CleanRequest& req) {
  Step s = make(StepId::kSwapReset, "swap reset", StepState::kSkipped, "");
  if (!mem.host.ok()) {
    s.detail = "/proc/meminfo not read";
    return s;
  }
  const HostMemory& h = *mem.host;
  if (h.swap_total_bytes == 0) {
    s.detail = "no swap";
    return s;
  }
  uint64_t used =
      h.swap_total_bytes > h.swap_free_bytes ? h.swap_total_bytes - h.swap_free_bytes : 0;
  if (req.swap_areas) {
    for (const auto& a : *req.swap_areas) {
      s.lines.push_back(fmt::format("{} ({}, {} used, priority {})", a.path, a.type,
                                    gb(a.used_bytes), a.priority));
    }
  }
  if (used == 0) {
    s.detail = "nothing is swapped out; turning swap off and on would change nothing";
    return s;
  }
  uint64_t to_move = used > h.swap_cached_bytes ? used - h.swap_cached_bytes : 0;
  uint64_t reserve = facts::kHeadroomFloorBytes;
  if (to_move + reserve > h.available_bytes) {
    s.detail = fmt::format("{} swapped out would not fit in RAM ({} available, {} kept free)",
                           gb(to_move), gb(h.available_bytes), gb(reserve));
    return s;
  }
  s.state = StepState::kWould;
  s.detail = fmt::format(
      "swapoff and swapon of each active area, journaled: {} moves back into RAM and all {} of "
      "swap is free for the load (000 §6 step 3)",
      gb(to_move), gb(h.swap_total_bytes));
  return s;
}

Step cuda_step(const MemReport& mem) {
  Step s = make(StepId::kCudaContext, "fresh CUDA context", StepState::kSkipped, "");
  if (mem.platform.kind == facts::PlatformKind::kNoGpu) {
    s.detail = "no GPU could be read";
    return s;
  }
  s.state = StepState::kWould;
  s.detail =
      "create and release a context on GPU 0 and read cuMemGetInfo: starting a context lets "
      "the driver reclaim allocations of dead processes (000 §6 step 4)";
  return s;
}

Step verdict_step(const MemReport& mem, const CleanRequest& req) {
  Step s = make(StepId::kVerdict, "verdict", StepState::kInfo, "");
  auto need = choose_need(mem.platform, req.need_bytes);
  if (!need) {
    s.state = StepState::kSkipped;
    s.detail = "no --need given (the 70 GB default applies to a DGX Spark only)";
    return s;
  }
  CleanVerdict now = judge(mem.headroom, *need);
  if (!now.headroom_bytes) {
    s.detail = fmt::format("headroom against {} ({}): headroom not computed", gb(need->bytes),
                           need->source);
    return s;
  }
  s.state = StepState::kWould;
  s.detail =
      fmt::format("headroom against {} ({}); now {}: {}", gb(need->bytes), need->source,
                  format_gb(*now.headroom_bytes), now.pass ? "enough already" : "not enough yet");
  return s;
}

}  // namespace

std::string_view step_key(StepId id) {
  switch (id) {
    case StepId::kHolders:
      return "holders";
    case StepId::kStopKnown:
      return "stop_known";
    case StepId::kStaleHolders:
      return "stale_holders";
    case StepId::kDropCaches:
      return "drop_caches";
    case StepId::kVmTuning:
      return "vm_tuning";
    case StepId::kSwapReset:
      return "swap_reset";
    case StepId::kCudaContext:
      return "cuda_context";
    case StepId::kMeasure:
      return "measure";
    case StepId::kDropCachesAgain:
      return "drop_caches_again";
    case StepId::kVerdict:
      return "verdict";
    case StepId::kClockCap:
      return "clock_cap";
  }
  return "unknown";
}

std::string_view state_key(StepState state) {
  switch (state) {
    case StepState::kWould:
      return "would";
    case StepState::kInfo:
      return "info";
    case StepState::kSkipped:
      return "skipped";
    case StepState::kDone:
      return "done";
    case StepState::kFailed:
      return "failed";
  }
  return "unknown";
}

MemoryFigures figures_of(const Snapshot& snapshot, const facts::Platform& platform) {
  MemoryFigures f;
  auto headroom = facts::compute_headroom(snapshot, platform);
  if (headroom) f.headroom_bytes = headroom->bytes;
  if (snapshot.meminfo.ok()) {
    const sys::MemInfo& m = *snapshot.meminfo;
    f.page_cache_bytes = headroom ? headroom->page_cache_bytes : facts::page_cache(m).bytes;
    f.mem_available_bytes = m.mem_available_bytes;
    f.mem_free_bytes = m.mem_free_bytes;
  }
  return f;
}

std::optional<MemoryNeed> choose_need(const facts::Platform& platform,
                                      std::optional<uint64_t> need_bytes) {
  if (need_bytes) return MemoryNeed{*need_bytes, "--need"};
  if (platform.kind == facts::PlatformKind::kDgxSpark) {
    return MemoryNeed{kSeedNeedBytes,
                      "the GB10 default: 000 §6 wants more than 70 GB free to load"};
  }
  return std::nullopt;
}

CleanVerdict judge(const std::optional<facts::Headroom>& headroom, const MemoryNeed& need) {
  CleanVerdict v;
  v.need = need;
  if (!headroom) {
    v.rule = "headroom not computed (memory readings missing)";
    return v;
  }
  v.headroom_bytes = headroom->bytes;
  v.rule = headroom->rule;
  v.pass = headroom->bytes >= 0 && static_cast<uint64_t>(headroom->bytes) >= need.bytes;
  return v;
}

Step& CleanReport::step(StepId id) {
  for (auto& s : steps) {
    if (s.id == id) return s;
  }
  return steps.front();  // unreachable for a plan from plan_clean
}

const Step* CleanReport::find(StepId id) const {
  for (const auto& s : steps) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

bool CleanReport::any_failed() const {
  for (const auto& s : steps) {
    if (s.state == StepState::kFailed) return true;
  }
  return false;
}

CleanReport plan_clean(const Snapshot& snapshot, const MemReport& mem, const CleanRequest& req) {
  CleanReport r;
  r.source = mem.source;
  r.taken_at = mem.taken_at;
  r.hostname = mem.hostname;
  r.platform = mem.platform;
  r.dry_run = !req.execute;
  r.before = figures_of(snapshot, mem.platform);
  r.steps.push_back(holders_step(mem));
  r.steps.push_back(stop_step(mem, req));
  r.steps.push_back(stale_step(mem));
  r.steps.push_back(drop_step(StepId::kDropCaches, mem));
  r.steps.push_back(vm_step(snapshot, req));
  r.steps.push_back(clock_cap_step(mem.platform, req));
  r.steps.push_back(swap_step(mem, req));
  r.steps.push_back(cuda_step(mem));
  Step measure = make(StepId::kMeasure, "measure", StepState::kWould,
                      fmt::format("read /proc/meminfo again: page cache {} and available {} "
                                  "now",
                                  gb(r.before.page_cache_bytes), gb(r.before.mem_available_bytes)));
  r.steps.push_back(std::move(measure));
  r.steps.push_back(drop_step(StepId::kDropCachesAgain, mem));
  r.steps.push_back(verdict_step(mem, req));
  if (auto need = choose_need(mem.platform, req.need_bytes)) r.verdict = judge(mem.headroom, *need);
  if (req.earlier_journal) {
    r.notes.push_back(fmt::format(
        "An earlier run's journal is still there ({}): values it changed were not restored. A run "
        "adds to it; `sparkdoc clean --restore` restores what the machine had before the first "
        "run.",
        *req.earlier_journal));
  }
  return r;
}

}  // namespace sparkdoc::clean
