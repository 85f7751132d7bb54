#include "report/watch_csv.h"

#include <fmt/format.h>

#include "core/time.h"

namespace sparkdoc::report {

std::vector<std::string> csv_lines(const runlog::Sample& sample) {
  std::vector<std::string> lines;
  std::string timestamp = nvidia_smi_timestamp(sample.ts);
  for (const runlog::GpuSample& g : sample.gpus) {
    std::string temperature = g.temp_c ? std::to_string(*g.temp_c) : "[N/A]";
    std::string power = g.power_w ? fmt::format("{:.2f} W", *g.power_w) : "[N/A]";
    lines.push_back(fmt::format("{}, {}, {}", timestamp, temperature, power));
  }
  return lines;
}

}  // namespace sparkdoc::report
