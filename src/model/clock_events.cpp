#include "model/clock_events.h"

#include <fmt/format.h>

#include "model/gpu.h"

namespace sparkdoc::gpu {

std::string_view clock_event_reason_name(uint64_t bit) {
  switch (bit) {
    case kReasonGpuIdle:
      return "Idle";
    case kReasonApplicationsClocks:
      return "Applications Clocks Setting";
    case kReasonSwPowerCap:
      return "SW Power Cap";
    case kReasonHwSlowdown:
      return "HW Slowdown";
    case kReasonSyncBoost:
      return "Sync Boost";
    case kReasonSwThermal:
      return "SW Thermal Slowdown";
    case kReasonHwThermal:
      return "HW Thermal Slowdown";
    case kReasonHwPowerBrake:
      return "HW Power Brake Slowdown";
    case kReasonDisplayClocks:
      return "Display Clock Setting";
    default:
      return {};
  }
}

std::vector<std::string> active_clock_event_reasons(uint64_t reasons) {
  std::vector<std::string> active;
  for (unsigned shift = 0; shift < 64; ++shift) {
    uint64_t bit = uint64_t{1} << shift;
    if ((reasons & bit) == 0) continue;
    std::string_view name = clock_event_reason_name(bit);
    active.push_back(name.empty() ? fmt::format("{:#x}", bit) : std::string(name));
  }
  return active;
}

std::string describe_clock_event_reasons(uint64_t reasons) {
  std::vector<std::string> active = active_clock_event_reasons(reasons);
  if (active.empty()) return "none";
  std::string out;
  for (const auto& name : active) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace sparkdoc::gpu
