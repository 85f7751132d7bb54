// Which clock-event reasons and counters mean that a GPU was power-capped and which that it was
// slowed down, for everything that sums or groups them: watch's detectors (their slowdown
// groups) and the run summary (facts/run_summary.h). Power capping: the software power cap and
// the board's power limit. Slowed: thermal slowdown (software and hardware), hardware slowdown
// and the power brake. Neither: reliability, sync boost, low utilisation and the two "below
// application or base clocks" totals, which count time for any cause.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/gpu.h"

namespace sparkdoc::facts {

enum class Throttle : uint8_t { kNone, kPowerCap, kSlowdown };

inline constexpr uint64_t kPowerCapReasons = gpu::kReasonSwPowerCap;
inline constexpr uint64_t kThermalReasons = gpu::kReasonSwThermal | gpu::kReasonHwThermal;
inline constexpr uint64_t kHardwareSlowdownReasons =
    gpu::kReasonHwSlowdown | gpu::kReasonHwPowerBrake;
inline constexpr uint64_t kSlowdownReasons = kThermalReasons | kHardwareSlowdownReasons;

// By the key the log writes the counter under in "clock_event_counters_ns" (docs/WATCH.md,
// runlog::kClockCounterFields).
constexpr Throttle counter_throttle(std::string_view key) {
  if (key == "power" || key == "board_limit") return Throttle::kPowerCap;
  if (key == "thermal" || key == "sw_thermal" || key == "hw_thermal" || key == "hw_power_brake") {
    return Throttle::kSlowdown;
  }
  return Throttle::kNone;
}

}  // namespace sparkdoc::facts
