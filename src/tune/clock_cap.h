// The GPU clock cap that keeps a DGX Spark clear of its log-less hard power-off (field 2026
// §2): under sustained load near 90 W a GB10 can switch off with nothing in any log (EC/PSU
// protection or heat). The fix owners use is `nvidia-smi -lgc 300,2200` after
// nvidia-persistenced, about 1-5 % of decode speed, undone by `nvidia-smi -rgc`
// (tonyd2wild/dgx-spark-hard-poweroff-fix). A power-wedged unit (G4: pinned at 500-850 MHz)
// ignores the cap; power-cycle it first.
//
// This file is the pure part: the value of --cap-clocks, its bounds, and what a cap costs on a
// GB10 by the field's figures. tune/gpu_clocks.h sets it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sparkdoc::tune {

// A range for nvmlDeviceSetGpuLockedClocks, MHz.
struct ClockCap {
  unsigned min_mhz = 300;
  unsigned max_mhz = 2200;
  bool operator==(const ClockCap&) const = default;
};

// The reference's `nvidia-smi -lgc 300,2200`.
inline constexpr ClockCap kGb10ClockCap{300, 2200};
// A cap under 500 MHz would hold the GPU below a power-wedged one (500-850 MHz); no NVIDIA GPU
// clocks above 4 GHz. MIN may be anything from 0 to MAX.
inline constexpr unsigned kClockCapLowestMaxMhz = 500;
inline constexpr unsigned kClockCapHighestMhz = 4000;

// The value of `--cap-clocks`: empty (the option alone) is kGb10ClockCap; "MAX" is
// kGb10ClockCap.min_mhz..MAX; "MIN,MAX" both. Errors say the form and the bounds.
Result<ClockCap> parse_clock_cap(std::string_view text);

// "300-2200 MHz".
std::string clock_cap_text(ClockCap cap);

// Cap against draw under sustained load on a GB10, from the field's measurements (field 2026
// §2, tonyd2wild/dgx-spark-hard-poweroff-fix#31); 2455 MHz is a GB10 uncapped.
struct CapFigure {
  unsigned max_mhz;
  unsigned watts;
  unsigned temp_c;
};
inline constexpr std::array<CapFigure, 5> kGb10CapFigures = {{
    {2455, 47, 72},
    {2300, 34, 67},
    {2200, 32, 66},
    {2000, 27, 63},
    {1800, 23, 61},
}};

// What a cap of `max_mhz` does on a GB10 by those figures: "about 32 W at 66 C under load,
// against about 47 W at 72 C uncapped (2455 MHz)", a range between two rows, or the nearest row
// for a cap outside them.
std::string gb10_cap_effect(unsigned max_mhz);

// A GPU whose clocks can be capped, named by its UUID.
struct ClockGpu {
  std::string uuid;
  std::string name;
  std::optional<unsigned> max_mhz;  // its highest SM clock, when NVML reads it
  bool operator==(const ClockGpu&) const = default;
};

// Why `cap` should not be set on `gpu`, or nullopt: a MAX above the GPU's highest clock caps
// nothing (and the driver may refuse it), so a lower one is suggested.
std::optional<std::string> clock_cap_blocker(const ClockGpu& gpu, ClockCap cap);

}  // namespace sparkdoc::tune
