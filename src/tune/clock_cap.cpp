#include "tune/clock_cap.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"

namespace sparkdoc::tune {
namespace {

constexpr std::string_view kForm =
    "--cap-clocks takes MIN,MAX in MHz (--cap-clocks=300,2200) or MAX alone (--cap-clocks=2000 "
    "is 300-2000)";

Result<unsigned> mhz(std::string_view text, std::string_view what) {
  auto value = parse_i64(text);
  if (!value || text.empty() || text.front() < '0' || text.front() > '9') {
    return fail(Why::kError, fmt::format("{}: \"{}\" is not a number of MHz; {}", what,
                                         std::string(text), kForm));
  }
  if (*value > kClockCapHighestMhz) {
    return fail(Why::kError, fmt::format("{} {} MHz is above {} MHz, which no NVIDIA GPU reaches",
                                         what, *value, kClockCapHighestMhz));
  }
  return static_cast<unsigned>(*value);
}

std::string figure_text(const CapFigure& f) {
  return fmt::format("{} MHz ({} W, {} C)", f.max_mhz, f.watts, f.temp_c);
}

}  // namespace

Result<ClockCap> parse_clock_cap(std::string_view text) {
  if (text.empty()) return kGb10ClockCap;
  ClockCap cap = kGb10ClockCap;
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) {
    auto max = mhz(text, "MAX");
    if (!max) return tl::unexpected(max.error());
    cap.max_mhz = *max;
  } else {
    auto min = mhz(text.substr(0, comma), "MIN");
    if (!min) return tl::unexpected(min.error());
    auto max = mhz(text.substr(comma + 1), "MAX");
    if (!max) return tl::unexpected(max.error());
    cap = ClockCap{*min, *max};
  }
  if (cap.min_mhz > cap.max_mhz) {
    return fail(Why::kError,
                fmt::format("MIN {} MHz is above MAX {} MHz; {}", cap.min_mhz, cap.max_mhz, kForm));
  }
  if (cap.max_mhz < kClockCapLowestMaxMhz) {
    return fail(Why::kError,
                fmt::format("MAX {} MHz is under {} MHz: the GPU would run slower than a "
                            "power-wedged GB10; the field's cap is 2200 MHz (--cap-clocks)",
                            cap.max_mhz, kClockCapLowestMaxMhz));
  }
  return cap;
}

std::string clock_cap_text(ClockCap cap) {
  return fmt::format("{}-{} MHz", cap.min_mhz, cap.max_mhz);
}

std::string gb10_cap_effect(unsigned max_mhz) {
  const CapFigure& uncapped = kGb10CapFigures.front();
  const CapFigure& lowest = kGb10CapFigures.back();
  std::string against = fmt::format("against about {} W at {} C uncapped ({} MHz)", uncapped.watts,
                                    uncapped.temp_c, uncapped.max_mhz);
  if (max_mhz >= uncapped.max_mhz) {
    return fmt::format("about what a GB10 draws uncapped: {} W at {} C ({} MHz)", uncapped.watts,
                       uncapped.temp_c, uncapped.max_mhz);
  }
  if (max_mhz < lowest.max_mhz) {
    return fmt::format("less than at {} MHz, the lowest cap measured (about {} W at {} C), {}",
                       lowest.max_mhz, lowest.watts, lowest.temp_c, against);
  }
  for (size_t i = 1; i < kGb10CapFigures.size(); ++i) {
    const CapFigure& f = kGb10CapFigures[i];
    if (max_mhz == f.max_mhz) {
      return fmt::format("about {} W at {} C under load, {}", f.watts, f.temp_c, against);
    }
    if (max_mhz > f.max_mhz) {
      return fmt::format("between {} and {} under load, {}", figure_text(f),
                         figure_text(kGb10CapFigures[i - 1]), against);
    }
  }
  return against;  // unreachable: the rows cover lowest..uncapped
}

std::optional<std::string> clock_cap_blocker(const ClockGpu& gpu, ClockCap cap) {
  if (!gpu.max_mhz || cap.max_mhz <= *gpu.max_mhz) return std::nullopt;
  unsigned suggestion = *gpu.max_mhz > 100 ? (*gpu.max_mhz - 1) / 100 * 100 : *gpu.max_mhz;
  return fmt::format(
      "{} MHz is above this GPU's highest clock, {} MHz: such a cap changes nothing; name one "
      "below it (--cap-clocks={},{})",
      cap.max_mhz, *gpu.max_mhz, std::min(cap.min_mhz, suggestion), suggestion);
}

}  // namespace sparkdoc::tune
