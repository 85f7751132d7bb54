// S10 orphaned GPU memory (000 §6). A SIGKILLed container's CUDA allocations stay with the
// driver, invisible to nvidia-smi's process list, until a new CUDA context starts: each killed
// run left ~6 GB less, and a model that loaded the day before runs out of memory part-way.
// The figure is facts/orphans.h's, the one `sparkdoc mem` shows with its arithmetic:
//   WARN  more is held by no live process than a healthy machine keeps (8 GiB on unified
//         memory, 1 GiB per discrete GPU), with what to do;
//   INFO  the same while NVML's process list was not read: live processes may be the rest;
//   PASS  within the allowance; SKIP when /proc/meminfo (unified) or NVML (discrete) was not read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/units.h"
#include "facts/orphans.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s10 {
namespace {

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S10";
  auto estimate = facts::estimate_orphans(s, p);
  if (!estimate.ok()) {
    return make_finding(kId, Verdict::kSkip, "not estimated: " + estimate.why_not());
  }
  const facts::OrphanEstimate& e = *estimate;
  const auto held = static_cast<uint64_t>(e.unaccounted_bytes);
  if (!e.likely) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("{} held outside live processes, within the {} a healthy "
                                    "machine keeps",
                                    format_gb(held), format_gb(e.allowance_bytes)));
  }
  std::vector<std::string> details;
  details.push_back(e.formula);
  for (const auto& line : e.device_lines) details.push_back(line);
  for (const auto& c : e.caveats) details.push_back(c);
  for (const auto& a : e.advice) details.push_back(a);
  if (e.unified && !e.processes_known) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{} held outside what /proc/meminfo itemises, but NVML's "
                                    "process list was not read, so live GPU processes may be "
                                    "most of it; `sparkdoc mem` shows the arithmetic",
                                    format_gb(held)),
                        std::move(details));
  }
  std::string first =
      e.advice.empty() ? std::string("`sparkdoc mem` shows the arithmetic") : e.advice.front();
  return make_finding(
      kId, Verdict::kWarn,
      fmt::format("about {} is held by no live process (orphaned allocations of killed runs; a "
                  "healthy machine keeps {}): {}; `sparkdoc mem` shows the arithmetic",
                  format_gb(held), format_gb(e.allowance_bytes), first),
      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::s10

namespace sparkdoc::checks {

const CheckInfo& s10_orphaned_memory() {
  static constexpr CheckInfo kInfo{
      .id = "S10",
      .title = "GPU memory held by no live process (orphaned allocations)",
      .reads = "/proc/meminfo; NVML used memory and per-process memory",
      .symptom =
          "Each attempt after a killed container gets further less far into the load; "
          "nvidia-smi lists no process holding the missing memory",
      .cause =
          "The CUDA driver keeps a SIGKILLed process's allocations until a new CUDA context "
          "starts; on unified memory they lower MemFree but belong to no process, so neither "
          "nvidia-smi nor /proc shows them (each killed run left ~6 GB less).",
      .how_checked =
          "Unified memory: MemTotal - MemFree less what /proc/meminfo itemises and NVML's "
          "per-process figures, against 8 GiB a healthy Spark keeps; discrete: NVML used less "
          "its processes, against 1 GiB per GPU.",
      .fix =
          "Remove the dead containers (docker ps -a; docker rm -f), then `sparkdoc clean "
          "--yes` (a fresh CUDA context lets the driver reclaim them); reboot if it stays.",
      .source = "000 §6",
      .keywords =
          "orphaned orphan stale allocations killed container sigkill hbm missing "
          "memory leak driver cuda context reclaim",
      .run = &s10::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
