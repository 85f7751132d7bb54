#include "cli/cap_clocks_option.h"

#include <fmt/format.h>

namespace sparkdoc::cli {

void add_cap_clocks_option(CLI::App& command, CapClocksOption& out, const std::string& use) {
  tune::ClockCap cap = tune::kGb10ClockCap;
  out.option = command.add_flag(
      "--cap-clocks", out.value,
      fmt::format(
          "Lock the GPU clocks {} (root; journaled first). Alone it is {}, the DGX Spark's fix for "
          "its log-less power-off "
          "under sustained load near 90 W (at 2200 MHz about 32 W and 66 C instead of 47 W and "
          "72 C, 1-5 % slower decode). Another range only after '=': --cap-clocks=MIN,MAX, or "
          "--cap-clocks=MAX for {}..MAX. Other GPUs are capped too, but the figures are a "
          "GB10's",
          use, tune::clock_cap_text(cap), cap.min_mhz));
  // Shown in --help; a flag takes no separate value, so the completions offer none.
  out.option->type_name("[=MIN,MAX]");
}

std::optional<Result<tune::ClockCap>> cap_clocks_of(const CapClocksOption& option) {
  if (option.option == nullptr || option.option->count() == 0) return std::nullopt;
  // CLI11 gives a flag without a value the text "true".
  if (option.value == "true") return Result<tune::ClockCap>(tune::kGb10ClockCap);
  return tune::parse_clock_cap(option.value);
}

}  // namespace sparkdoc::cli
