// S7 gnome-remote-desktop (000 §6). On a Spark desktop it keeps a CUDA context of about 6 GB in
// the shared pool for as long as it runs.
//   WARN  running (a known server of that kind, or a /dev/nvidia* holder whose comm starts with
//         "gnome-remote-de", the kernel's 15-character cut) on unified memory:
//         `systemctl --user stop gnome-remote-desktop.service` before a load, or
//         `sudo systemctl stop gnome-remote-desktop.service` for the system-mode daemon
//         (started with --system: a system unit, not the user's).
//   INFO  the same on a discrete GPU, where it takes framebuffer memory, not the host's.
//   PASS  not running; SKIP when the process scan was not read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"
#include "facts/gpu_users.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s7 {
namespace {

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S7";
  if (!s.processes.ok()) {
    return make_finding(kId, Verdict::kSkip, "process scan not read: " + s.processes.reason());
  }
  std::vector<int> pids;
  bool system_mode = false;
  for (const auto& server : s.processes->servers) {
    if (server.kind != "gnome-remote-desktop") continue;
    pids.push_back(server.pid);
    system_mode = system_mode || server.cmdline.find("--system") != std::string::npos;
  }
  for (const auto& h : s.processes->gpu_holders) {
    if (h.comm.starts_with("gnome-remote-de") &&
        std::find(pids.begin(), pids.end(), h.pid) == pids.end()) {
      pids.push_back(h.pid);
      system_mode = system_mode || h.cmdline.find("--system") != std::string::npos;
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
  const std::string_view kFix = system_mode ? "sudo systemctl stop gnome-remote-desktop.service"
                                            : "systemctl --user stop gnome-remote-desktop.service";
  if (p.unified_memory()) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} {} in the shared memory pool: {} before a load", who, amount, kFix));
  }
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("{} {} on a discrete GPU (no host memory taken); {} frees it",
                                  who, amount, kFix));
}

}  // namespace
}  // namespace sparkdoc::checks::s7

namespace sparkdoc::checks {

const CheckInfo& s7_remote_desktop() {
  static constexpr CheckInfo kInfo{
      .id = "S7",
      .title = "gnome-remote-desktop holds GPU memory",
      .reads = "the process scan (/dev/nvidia* holders, known servers); NVML per-process memory",
      .symptom =
          "About 6 GB of the shared pool is gone before the run starts; a load that should fit "
          "runs out of memory near the end",
      .cause =
          "gnome-remote-desktop keeps a CUDA context for as long as it runs, and on unified "
          "memory that comes out of the same pool as the training run.",
      .how_checked = "Looks for gnome-remote-desktop among the GPU holders and known servers.",
      .fix =
          "systemctl --user stop gnome-remote-desktop.service before a load (sudo systemctl "
          "stop gnome-remote-desktop.service for the system-mode daemon).",
      .source = "000 §6",
      .keywords = "gnome remote desktop grd rdp vnc cuda context 6gb desktop session",
      .run = &s7::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
