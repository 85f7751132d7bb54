// The thermal sampler's CSV, as `nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw
// --format=csv -l 30` writes it (the seeds' skill records exactly these columns), so scripts
// written for that file read ours unchanged:
//   timestamp, temperature.gpu, power.draw [W]
//   2026/11/30 12:34:56.789, 45, 11.17 W
// one line per GPU per sample, local time, "[N/A]" for a value that could not be read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/runlog.h"

namespace sparkdoc::report {

inline constexpr std::string_view kCsvHeader = "timestamp, temperature.gpu, power.draw [W]";

// The sample's lines, one per GPU, without newlines.
std::vector<std::string> csv_lines(const runlog::Sample& sample);

}  // namespace sparkdoc::report
