// S5-S7: host and container set-up rules from the Nemotron recipe (000 §1, §6). Each function
// opens with its rule.
#include <fmt/format.h>

#include "checks/check_fns.h"
#include "checks/common.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"
#include "facts/gpu_users.h"
#include "facts/platform.h"

namespace sparkdoc::checks {
namespace {

constexpr uint64_t kMinStackBytes = 67108864;  // 64 MiB: --ulimit stack=67108864 (000 §1)
constexpr uint64_t kMinShmBytes = kGiB;        // Docker's default /dev/shm is 64 MB

std::string rlimit_text(const sys::Rlimit& r) {
  return r.soft ? format_binary(*r.soft) : std::string("unlimited");
}

}  // namespace

// S5 container limits (000 §1). Inside a container:
//   WARN  memlock (soft) not unlimited: CUDA pinned host allocations fail; --ulimit memlock=-1.
//   WARN  stack (soft) below 64 MiB: --ulimit stack=67108864.
//   WARN  /dev/shm below 1 GiB (Docker's default is 64 MB, too small for DataLoader workers and
//         NCCL): --ipc=host.
//   PASS  all three fine; SKIP when a limit that could decide it was not read.
// On a bare host: INFO with the values (these flags are container flags).
Finding check_s5_container_limits(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S5";
  const sys::Limits& l = s.limits;
  std::vector<std::string> values;
  std::vector<std::string> problems;
  std::vector<std::string> unread;

  if (l.memlock_bytes.ok()) {
    values.push_back("memlock " + rlimit_text(*l.memlock_bytes));
    if (l.memlock_bytes->soft) {
      problems.push_back(
          fmt::format("memlock is {}, not unlimited: CUDA pinned memory needs "
                      "--ulimit memlock=-1",
                      format_binary(*l.memlock_bytes->soft)));
    }
  } else {
    unread.push_back("memlock: " + l.memlock_bytes.reason());
  }
  if (l.stack_bytes.ok()) {
    values.push_back("stack " + rlimit_text(*l.stack_bytes));
    if (l.stack_bytes->soft && *l.stack_bytes->soft < kMinStackBytes) {
      problems.push_back(fmt::format("stack is {}, below 64 MiB: --ulimit stack=67108864",
                                     format_binary(*l.stack_bytes->soft)));
    }
  } else {
    unread.push_back("stack: " + l.stack_bytes.reason());
  }
  if (l.shm_size_bytes.ok()) {
    values.push_back("/dev/shm " + format_binary(*l.shm_size_bytes));
    if (*l.shm_size_bytes < kMinShmBytes) {
      problems.push_back(
          fmt::format("/dev/shm is {}, below 1 GiB (Docker's default is 64 MB): "
                      "--ipc=host",
                      format_binary(*l.shm_size_bytes)));
    }
  } else {
    unread.push_back("/dev/shm: " + l.shm_size_bytes.reason());
  }

  facts::Container c = facts::detect_container(s);
  if (!c.inside) {
    if (values.empty()) {
      return make_finding(kId, Verdict::kSkip, "limits not read (" + join(unread, "; ") + ")");
    }
    std::string tail = unread.empty() ? "" : " (" + join(unread, "; ") + ")";
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("bare host: {}{}", join(values, ", "), tail));
  }
  std::vector<std::string> details;
  for (const auto& u : unread) details.push_back("not read: " + u);
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, join(problems, "; "), details);
  }
  if (!unread.empty()) {
    return make_finding(
        kId, Verdict::kSkip,
        fmt::format("not read: {} ({} fine)", join(unread, "; "),
                    values.empty() ? std::string("nothing else") : join(values, ", ")),
        details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("container limits fit: {}", join(values, ", ")), details);
}

// S6 vm tunables left modified (000 §6). 000 raises min_free_kbytes to 1048576 and
// vfs_cache_pressure to 500 for the model-load window and restores them afterwards; left in
// place, the kernel keeps 1 GB free and evicts file pages five times harder for every later job.
//   WARN  min_free_kbytes == 1048576, or vfs_cache_pressure != 100 (the kernel default; 500 is
//         the load-window value). min_free_kbytes is only flagged at the seed's exact value,
//         because its default scales with RAM (000 restores 45166 on its Spark).
//   PASS  otherwise, with the values; SKIP when neither was read.
Finding check_s6_vm_tunables(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S6";
  constexpr int64_t kLoadMinFreeKb = 1048576;
  constexpr int64_t kLoadCachePressure = 500;
  constexpr int64_t kDefaultCachePressure = 100;
  const sys::VmTunables& vm = s.vm;
  if (!vm.min_free_kbytes.ok() && !vm.vfs_cache_pressure.ok()) {
    return make_finding(kId, Verdict::kSkip,
                        fmt::format("vm tunables not read (min_free_kbytes: {}; "
                                    "vfs_cache_pressure: {})",
                                    vm.min_free_kbytes.reason(), vm.vfs_cache_pressure.reason()));
  }
  std::vector<std::string> values;
  std::vector<std::string> modified;
  bool load_window = false;
  if (vm.min_free_kbytes.ok()) {
    values.push_back(fmt::format("min_free_kbytes={}", *vm.min_free_kbytes));
    if (*vm.min_free_kbytes == kLoadMinFreeKb) {
      modified.push_back(values.back());
      load_window = true;
    }
  } else {
    values.push_back("min_free_kbytes not read (" + vm.min_free_kbytes.reason() + ")");
  }
  if (vm.vfs_cache_pressure.ok()) {
    values.push_back(fmt::format("vfs_cache_pressure={}", *vm.vfs_cache_pressure));
    if (*vm.vfs_cache_pressure != kDefaultCachePressure) {
      modified.push_back(values.back());
      load_window = load_window || *vm.vfs_cache_pressure == kLoadCachePressure;
    }
  } else {
    values.push_back("vfs_cache_pressure not read (" + vm.vfs_cache_pressure.reason() + ")");
  }
  if (vm.swappiness.ok()) values.push_back(fmt::format("swappiness={}", *vm.swappiness));
  if (modified.empty()) return make_finding(kId, Verdict::kPass, join(values, ", "));
  std::string why = load_window ? "left from a previous load window" : "changed from the default";
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{} {}; restore vfs_cache_pressure=100 and min_free_kbytes to "
                                  "its boot value (000 restores 45166; the default scales with "
                                  "RAM): sparkdoc clean --restore",
                                  join(modified, ", "), why));
}

// S7 gnome-remote-desktop (000 §6). On a Spark desktop it keeps a CUDA context of about 6 GB in
// the shared pool for as long as it runs.
//   WARN  running (a known server of that kind, or a /dev/nvidia* holder whose comm starts with
//         "gnome-remote-de", the kernel's 15-character cut) on unified memory:
//         `systemctl --user stop gnome-remote-desktop.service` before a load.
//   INFO  the same on a discrete GPU, where it takes framebuffer memory, not the host's.
//   PASS  not running; SKIP when the process scan was not read.
Finding check_s7_remote_desktop(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S7";
  if (!s.processes.ok()) {
    return make_finding(kId, Verdict::kSkip, "process scan not read: " + s.processes.reason());
  }
  std::vector<int> pids;
  for (const auto& server : s.processes->servers) {
    if (server.kind == "gnome-remote-desktop") pids.push_back(server.pid);
  }
  for (const auto& h : s.processes->gpu_holders) {
    if (h.comm.starts_with("gnome-remote-de") &&
        std::find(pids.begin(), pids.end(), h.pid) == pids.end()) {
      pids.push_back(h.pid);
    }
  }
  if (pids.empty()) {
    return make_finding(kId, Verdict::kPass, "gnome-remote-desktop is not running");
  }
  uint64_t held = 0;
  bool measured = false;
  for (const auto& proc : facts::gpu_users(s)) {
    if (std::find(pids.begin(), pids.end(), static_cast<int>(proc.pid)) == pids.end()) continue;
    if (proc.used_bytes) {
      held += *proc.used_bytes;
      measured = true;
    }
  }
  std::vector<std::string> pid_text;
  for (int pid : pids) pid_text.push_back(std::to_string(pid));
  std::string who = fmt::format("gnome-remote-desktop (pid {})", join(pid_text, ", "));
  std::string amount = measured ? fmt::format("holds {} of GPU memory", format_gb(held))
                                : std::string("holds a CUDA context (~6 GB on GB10)");
  constexpr std::string_view kFix = "systemctl --user stop gnome-remote-desktop.service";
  if (p.unified_memory()) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} {} in the shared memory pool: {} before a load", who, amount, kFix));
  }
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("{} {} on a discrete GPU (no host memory taken); {} frees it",
                                  who, amount, kFix));
}

}  // namespace sparkdoc::checks
