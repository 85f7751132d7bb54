// --cap-clocks[=MIN,MAX] of `sparkdoc clean` and `sparkdoc run` (tune/clock_cap.h). A flag
// whose value, when there is one, is joined to it with '=': `--cap-clocks -- python train.py`
// and `--cap-clocks --yes` must not take the next word as the range.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "core/result.h"
#include "tune/clock_cap.h"

namespace sparkdoc::cli {

struct CapClocksOption {
  std::string value;  // as parsed: "true" for the flag alone, else what followed '='
  CLI::Option* option = nullptr;
};

// Adds the flag to `command`; `use` says for how long and what undoes it ("while the command
// runs, reset when it ends").
void add_cap_clocks_option(CLI::App& command, CapClocksOption& out, const std::string& use);

// nullopt when the flag was not given; else the cap, or the usage error to print.
std::optional<Result<tune::ClockCap>> cap_clocks_of(const CapClocksOption& option);

}  // namespace sparkdoc::cli
