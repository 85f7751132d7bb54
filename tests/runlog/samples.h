// The samples and header the model tests share: a GB10 under light load as NVML answers it
// (no framebuffer figure, no memory clock, reasons 0x0 with hours on the power-cap counter).
#pragma once

#include <optional>
#include <vector>

#include "model/runlog.h"

namespace sparkdoc::runlog {

inline LogHeader gb10_header() {
  LogHeader h;
  h.sparkdoc_version = "0.1.0";
  h.host = "spark-01";
  h.platform = "dgx-spark";
  h.driver_version = "580.95.05";
  h.gpus.push_back(GpuInfo{0, "NVIDIA GB10", "GPU-3c1f8e2a", "0000000F:01:00.0", std::nullopt});
  return h;
}

inline Sample gb10_sample() {
  Sample s;
  s.ts = 1796000000.125;
  GpuSample g;
  g.power_w = 11.17;
  g.temp_c = 45;
  g.sm_clock_mhz = 2522;
  g.util_pct = 10;
  g.clock_event_reasons = 0;
  g.energy_mj = 912345678;
  g.counters.power = 10800240649000;
  g.counters.hw_thermal = 1195386000;
  g.processes =
      std::vector<GpuProcessUse>{{48213, "python3", 95860113408}, {2011, "Xorg", 88080384}};
  s.gpus.push_back(g);
  s.mem.total_bytes = 130663165952;
  s.mem.available_bytes = 37068800000;
  s.mem.cached_bytes = 5222400000;
  s.mem.psi_some_avg10 = 1.25;
  return s;
}

}  // namespace sparkdoc::runlog
