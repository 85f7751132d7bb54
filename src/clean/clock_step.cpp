// clean/clock_step.h. The cap and its figures are tune/clock_cap.h's (field 2026 §2: a GB10
// under sustained load near 90 W can switch off without a log; `nvidia-smi -lgc 300,2200` is
// the owners' fix). On another GPU the step is allowed, but says the figures are a GB10's.
#include "clean/clock_step.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/strings.h"

namespace sparkdoc::clean {
namespace {

using tune::ClockCap;
using tune::ClockGpu;

constexpr std::string_view kRestoreText =
    "stays for the run; `sparkdoc clean --restore` resets the clocks (as nvidia-smi -rgc)";

bool is_gb10(const facts::Platform& platform, const ClockGpu& gpu) {
  return platform.kind == facts::PlatformKind::kDgxSpark ||
         gpu.name.find("GB10") != std::string::npos;
}

std::string gpu_text(const ClockGpu& gpu) {
  return gpu.name.empty() ? gpu.uuid : gpu.uuid + " (" + gpu.name + ")";
}

std::string highest_text(const ClockGpu& gpu) {
  return gpu.max_mhz ? fmt::format(" (highest clock {} MHz)", *gpu.max_mhz) : std::string();
}

std::string why_gb10(ClockCap cap) {
  return fmt::format(
      "a GB10 under sustained load near 90 W can switch off without a log (field 2026); capped "
      "at {} MHz it draws {}, for 1-5 % of decode speed",
      cap.max_mhz, tune::gb10_cap_effect(cap.max_mhz));
}

std::string not_asked(const facts::Platform& platform) {
  ClockCap cap = tune::kGb10ClockCap;
  if (platform.kind == facts::PlatformKind::kNoGpu) return "no GPU could be read";
  if (platform.kind == facts::PlatformKind::kDgxSpark) {
    const tune::CapFigure& uncapped = tune::kGb10CapFigures.front();
    const tune::CapFigure& capped = tune::kGb10CapFigures[2];
    static_assert(tune::kGb10CapFigures[2].max_mhz == tune::kGb10ClockCap.max_mhz);
    return fmt::format(
        "not asked: --cap-clocks locks the GPU clocks to {}, journaled: a GB10 under sustained "
        "load near 90 W can switch off without a log; at {} MHz it draws about {} W, not {} W "
        "(field 2026)",
        tune::clock_cap_text(cap), capped.max_mhz, capped.watts, uncapped.watts);
  }
  return fmt::format(
      "not asked: --cap-clocks=MIN,MAX locks the GPU clocks, journaled (its default {} is the "
      "DGX Spark's fix for power-offs under load)",
      tune::clock_cap_text(cap));
}

// Why nothing is capped: a dry run skips, a run that was asked to cap fails.
Step refused(Step s, const CleanRequest& req, std::string why) {
  s.state = req.execute ? StepState::kFailed : StepState::kSkipped;
  s.detail = "cannot cap the GPU clocks: " + std::move(why);
  return s;
}

}  // namespace

Reading<std::vector<ClockGpu>> clock_gpus_of(const Snapshot& snapshot) {
  if (!snapshot.gpu.nvml.ok()) {
    return Missing{snapshot.gpu.nvml.missing().why, "NVML not read: " + snapshot.gpu.nvml.reason()};
  }
  std::vector<ClockGpu> out;
  for (const auto& d : snapshot.gpu.nvml->devices) {
    if (!d.uuid.ok() || d.uuid->empty()) continue;
    ClockGpu g;
    g.uuid = *d.uuid;
    g.name = d.name.value_or("");
    if (d.max_sm_clock_mhz.ok()) g.max_mhz = *d.max_sm_clock_mhz;
    out.push_back(std::move(g));
  }
  return out;
}

Step clock_cap_step(const facts::Platform& platform, const CleanRequest& req) {
  Step s;
  s.id = StepId::kClockCap;
  s.title = "GPU clock cap";
  s.state = StepState::kSkipped;
  if (!req.cap_clocks) {
    s.detail = not_asked(platform);
    return s;
  }
  const ClockCap cap = *req.cap_clocks;
  if (!req.clock_gpus.ok()) return refused(std::move(s), req, req.clock_gpus.missing().detail);
  if (req.clock_gpus->empty()) return refused(std::move(s), req, "NVML lists no GPU with a UUID");
  bool gb10 = false;
  std::vector<std::string> blocked;
  for (const ClockGpu& gpu : *req.clock_gpus) {
    if (auto blocker = tune::clock_cap_blocker(gpu, cap)) {
      s.lines.push_back(gpu_text(gpu) + ": left alone: " + *blocker);
      blocked.push_back(*blocker);
      continue;
    }
    gb10 = gb10 || is_gb10(platform, gpu);
    s.lines.push_back(
        fmt::format("{}: {}{}", gpu_text(gpu), tune::clock_cap_text(cap), highest_text(gpu)));
    s.clock_locks.push_back(ClockLock{gpu, cap, false});
  }
  if (s.clock_locks.empty()) return refused(std::move(s), req, join(blocked, "; "));
  s.state = StepState::kWould;
  if (gb10) {
    s.detail = fmt::format("lock the GPU clocks to {}, journaled first: {}; {}",
                           tune::clock_cap_text(cap), why_gb10(cap), kRestoreText);
    s.lines.push_back(
        "a power-wedged GB10 (stuck at 500-850 MHz, G4) ignores the cap: power-cycle it first");
  } else {
    s.detail = fmt::format(
        "lock the GPU clocks to {}, journaled first; the figures behind the default are a "
        "GB10's (2200 MHz: about 32 W against 47 W uncapped), so watch this GPU's draw with "
        "`sparkdoc watch`; {}",
        tune::clock_cap_text(cap), kRestoreText);
  }
  s.lines.push_back(
      "NVML cannot read a lock back: a cap set before (nvidia-smi -lgc) is replaced, and "
      "--restore resets to the driver's default");
  return s;
}

}  // namespace sparkdoc::clean
