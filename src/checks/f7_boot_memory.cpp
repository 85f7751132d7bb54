// F7 boot-time memory caps on GB10. What CUDA can have is set at boot: MemTotal is 121.69 GiB
// on most units (CUDA's total equals it in every report), the firmware's Display Reserved
// Memory takes 2 GB (4 GB option) before that, and the DGX OS 7.5.0 OTA was reported to take
// 7.2 GiB more (forum 383222 [2nd]: 119.5 -> 112.3 GiB). CUDA's free memory at boot capped at
// 101.3-102.2 GiB on one pair (MiaAI GLM#47), so vLLM at 0.87 (105.87 GiB) never starts, and
// 0.90-0.95 fail after long sessions; 0.85 is the recipe's ceiling (vllm-project/recipes PR#632).
//   WARN  MemTotal below 115 GiB (more than the Display Reserved Memory option explains); a
//         vLLM server or --cmd asks --gpu-memory-utilization above 0.85;
//   INFO  MemTotal and what that leaves, otherwise; SKIP off GB10 or without /proc/meminfo.
#include <fmt/format.h>

#include <optional>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f7 {
namespace {

constexpr double kUsualMemTotalGiB = 121.69;
constexpr double kLowMemTotalGiB = 115.0;
constexpr double kUtilizationCeiling = 0.85;

// The value of --gpu-memory-utilization (or gpu_memory_utilization=) in a command line.
std::optional<double> gpu_memory_utilization(std::string_view cmdline) {
  auto words = split_ws(cmdline);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    for (std::string_view key :
         {"--gpu-memory-utilization", "--gpu_memory_utilization", "gpu_memory_utilization"}) {
      if (!starts_with(w, key)) continue;
      std::string_view rest = w.substr(key.size());
      if (rest.empty() && i + 1 < words.size()) return parse_double(words[i + 1]);
      if (!rest.empty() && rest.front() == '=') return parse_double(rest.substr(1));
    }
  }
  return std::nullopt;
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform&) {
  constexpr std::string_view kId = "F7";
  if (!s.meminfo.ok()) {
    return make_finding(kId, Verdict::kSkip, "/proc/meminfo not read: " + s.meminfo.why_not());
  }
  double total_gib = static_cast<double>(s.meminfo->mem_total_bytes) / static_cast<double>(kGiB);
  std::vector<std::string> problems;
  std::vector<std::string> asks;
  if (w.command) asks.push_back(*w.command);
  if (s.processes.ok()) {
    for (const sys::KnownServer& k : s.processes->servers) {
      if (k.kind == "vllm") asks.push_back(k.cmdline);
    }
  }
  for (const std::string& cmd : asks) {
    auto u = gpu_memory_utilization(cmd);
    if (u && *u > kUtilizationCeiling) {
      problems.push_back(
          fmt::format("--gpu-memory-utilization {:.2f} is above 0.85: CUDA's free "
                      "memory at boot can cap near 101-102 GiB (0.87 never "
                      "starts), and 0.90-0.95 fail after long sessions; use 0.85 "
                      "or less",
                      *u));
    }
  }
  if (total_gib < kLowMemTotalGiB) {
    problems.push_back(
        fmt::format("MemTotal {:.1f} GiB is {:.1f} GiB below the usual {:.2f}: "
                    "more than Display Reserved Memory (2 GB, 4 GB option) "
                    "explains; check the BIOS setting and whether a DGX OS update "
                    "took it (7.5.0 was reported to take 7.2 GiB)",
                    total_gib, kUsualMemTotalGiB - total_gib, kUsualMemTotalGiB));
  }
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, problems.front(), problems);
  }
  return make_finding(
      kId, Verdict::kInfo,
      fmt::format("MemTotal {:.1f} GiB (usual {:.2f}); CUDA's free memory at boot can be 10-20 GiB "
                  "less: size vLLM's --gpu-memory-utilization from the free memory measured "
                  "after boot, 0.85 at most",
                  total_gib, kUsualMemTotalGiB));
}

std::optional<std::string> applies(const Snapshot&, const facts::Platform& p) {
  if (p.kind == facts::PlatformKind::kDgxSpark) return std::nullopt;
  return "GB10's boot-time carve-outs only (" + p.description + ")";
}

}  // namespace
}  // namespace sparkdoc::checks::f7

namespace sparkdoc::checks {

const CheckInfo& f7_boot_memory() {
  static constexpr CheckInfo kInfo{
      .id = "F7",
      .title = "Boot-time memory caps and Display Reserved Memory (GB10)",
      .reads = "/proc/meminfo MemTotal; vLLM servers' command lines; --cmd",
      .symptom =
          "vLLM refuses to start: \"Free memory on device ... on startup is less than "
          "desired GPU memory utilization\"; cudaMemGetInfo reports far less than "
          "MemAvailable",
      .cause =
          "The firmware reserves Display Reserved Memory (2 GB, 4 GB option) before Linux "
          "boots, the driver keeps its own reserve, and cudaMemGetInfo leaves out "
          "reclaimable memory and swap: free memory at boot capped at 101.3-102.2 of 121.69 "
          "GiB on one pair. A DGX OS 7.5.0 update was reported to take 7.2 GiB more.",
      .how_checked =
          "MemTotal against the usual 121.69 GiB (WARN below 115 GiB); "
          "--gpu-memory-utilization of vLLM servers and --cmd against 0.85.",
      .fix =
          "Budget from MemAvailable (+SwapFree) as NVIDIA's rule does (G3); derive "
          "--gpu-memory-utilization from the free memory measured after boot, 0.85 at most; "
          "check Display Reserved Memory in the BIOS; run headless.",
      .source =
          "field 2026 §3: MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47 (2026-08-30), "
          "vllm-project/recipes PR#632, forum 383222 [2nd]",
      .keywords =
          "memtotal boot free memory cap display reserved memory bios cudamemgetinfo "
          "gpu-memory-utilization vllm free memory on device less than desired",
      .run = &f7::judge,
      .applies = &f7::applies,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
