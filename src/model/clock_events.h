// Names for NVML clock-event ("throttle") reasons, spelled as `nvidia-smi -q` prints them under
// "Clocks Event Reasons". Pure functions of a bit mask: no driver, no dlopen, so checks and
// reports may link them (part of sparkdoc_model).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::gpu {

// Every bit the kReason* constants in gpu/readings.h define.
inline constexpr uint64_t kKnownReasons = 0x1FF;

// "SW Power Cap" for kReasonSwPowerCap; empty for 0, for a bit no kReason* names, and for a
// value with more than one bit set.
std::string_view clock_event_reason_name(uint64_t bit);

// The reasons set in `reasons`, lowest bit first. A set bit that nvidia-smi does not name is
// listed as its hex value ("0x200"), so nothing the driver reports is dropped.
std::vector<std::string> active_clock_event_reasons(uint64_t reasons);

// The active reasons joined with ", ", or "none" when no bit is set.
std::string describe_clock_event_reasons(uint64_t reasons);

}  // namespace sparkdoc::gpu
