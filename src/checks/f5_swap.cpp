// F5 swap in use. SwapFree counts toward what can start (NVIDIA's rule, G3), not toward what
// runs at speed: decode fell from 37 tok/s with no swap in use to 21 tok/s at 6.7 GiB (-43 %)
// and 1.8 tok/s at 13 GiB (-95 %) (forum 358869 [2nd]).
//   WARN  swap in use while a process holds the GPU;
//   INFO  swap in use with no GPU process (a run started now competes with it);
//   PASS  none in use; SKIP when /proc/meminfo was not read.
// Nothing is undone automatically: swapoff under load invites the OOM killer.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f5 {
namespace {

bool gpu_in_use(const Snapshot& s) {
  if (s.processes.ok() && !s.processes->gpu_holders.empty()) return true;
  if (!s.gpu.nvml.ok()) return false;
  for (const gpu::Device& d : s.gpu.nvml->devices) {
    if (d.processes.ok() && !d.processes->empty()) return true;
  }
  return false;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "F5";
  if (!s.meminfo.ok()) {
    return make_finding(kId, Verdict::kSkip, "/proc/meminfo not read: " + s.meminfo.why_not());
  }
  const sys::MemInfo& m = *s.meminfo;
  if (m.swap_total_bytes == 0) return make_finding(kId, Verdict::kPass, "no swap configured");
  uint64_t used = m.swap_total_bytes - std::min(m.swap_free_bytes, m.swap_total_bytes);
  if (used == 0) {
    return make_finding(
        kId, Verdict::kPass,
        fmt::format("no swap in use ({} configured)", format_binary(m.swap_total_bytes)));
  }
  std::string figure =
      fmt::format("{} of {} swap in use", format_binary(used), format_binary(m.swap_total_bytes));
  if (gpu_in_use(s)) {
    return make_finding(kId, Verdict::kWarn,
                        figure +
                            " while a process holds the GPU: paging slows a run (decode -43 % "
                            "at 6.7 GiB, -95 % at 13 GiB); stop what holds the memory or "
                            "plan the run smaller (sparkdoc plan) rather than swapoff under "
                            "load");
  }
  return make_finding(kId, Verdict::kInfo,
                      figure +
                          " with no GPU process: a run started now competes with what was "
                          "swapped out; sudo swapoff -a && sudo swapon -a brings it back "
                          "while MemAvailable holds it");
}

}  // namespace
}  // namespace sparkdoc::checks::f5

namespace sparkdoc::checks {

const CheckInfo& f5_swap() {
  static constexpr CheckInfo kInfo{
      .id = "F5",
      .title = "Swap in use",
      .reads =
          "/proc/meminfo SwapTotal and SwapFree; processes holding /dev/nvidia*; NVML's "
          "process lists",
      .symptom = "Tokens per second drop by half or more in a long run although nothing failed",
      .cause =
          "On unified memory the GPU's working set and the host's share one pool; once it "
          "is full the kernel pages to swap, and every access to a swapped page waits for "
          "the disk.",
      .how_checked = "SwapTotal - SwapFree above zero; WARN when a process holds the GPU.",
      .fix =
          "Free memory (stop other jobs, sparkdoc clean), plan the run smaller; bring swapped "
          "pages back with sudo swapoff -a && sudo swapon -a only while MemAvailable exceeds "
          "the swap in use.",
      .source = "field 2026 §3: forum 358869 [2nd]",
      .keywords = "swap swapped paging slow tokens per second decode swapfree swaptotal",
      .run = &f5::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
