// Detectors: judge a stream of samples and raise events (the kinds are model/runlog.h's). Pure:
// they see only the samples fed to them (time comes from each sample's ts), so a recorded log or a
// replayed trace gives the same events as the live run did. Each detector fires once per episode:
// it raises one event when its condition starts and stays quiet until the condition has been absent
// for clear_after_s (a more severe level within an episode raises one more event).
//
// The rules and where their thresholds come from (002 G4 and G6; shared reference
// gb10-nvml-dcgm.md §2.2, §2.3, §3, §6):
//   power_cap_plateau (warn)  G4: "if power plateaus ... while temperature climbs, treat
//       throttling as the cause". Over the last plateau_window_s (60 s), power stays within
//       max(5 W, 5 %) of its mean while the temperature rises by >= 3 C and is still at its
//       highest; the GPU is busy (mean utilisation >= 80 %) and, where an enforced power limit
//       is known, the mean is >= 85 % of it. GB10 has no readable limit and sustains ~100 W.
//   clock_slowdown (info for power capping and reliability, warn for thermal and hardware
//       slowdown)  a clock-event reason bit of the group is set, or one of the group's
//       cumulative counters advanced by >= 10 % of the time since the previous sample. GB10
//       often reads the reasons as 0x0 while capped (one node: ~3 h of SW power capping, no
//       reason shown), so the counters are judged as well as the bits.
//   sm_clock_drop (warn)  while the GPU is >= 50 % busy, the SM clock is below 75 % of the
//       highest clock it held busy earlier in the run; on DGX Spark also utilisation >= 90 %
//       with the SM clock < 1000 MHz, the degraded USB-PD power state (500-850 MHz against
//       ~2400 MHz), which a run can start in.
//   new_gpu_process (warn when another process on that GPU holds >= 1 GiB, G6; else info)
//       and gpu_process_exit (info): a PID that appears in, or leaves, NVML's process list. The
//       first list read is the baseline.
//   memory_pressure  warn: PSI some avg10 >= 10 %, PSI full avg10 >= 2 %, or MemAvailable
//       below min(16 GiB, MemTotal/8) (community alerts warn below 16-24 GiB; driver
//       allocations fail before MemAvailable reaches 0); info: MemAvailable fell by >= 10 % of
//       MemTotal within 30 s and is below half of it.
//   memory_collapse (warn, unified memory only)  MemAvailable fell by >= 15 % of MemTotal within
//       15 s to below 25 % of it: the fall the silent host wedge's reports show before the
//       freeze (field-2026 §1: 28.97 -> 6.27 GiB in 11 s, vllm#56824; 34.0 -> 12.7 GiB in
//       1.5 s, playbooks#116), which drop_caches does not undo (driver memory).
//   page_cache_growth (warn on unified memory, info elsewhere)  the page cache (Cached +
//       Buffers - Shmem, facts::page_cache_bytes: shmem is no cache that dropping frees) grew by
//       >= max(2 GiB, 3 % of MemTotal) within 60 s during a load: GPU memory grew >= 1 GiB,
//       or MemAvailable fell >= 3 % of MemTotal, in the same window (G3: on DGX Spark the cache
//       of the checkpoint being read competes with the model's allocations).
//   power_wedge (warn, DGX Spark)  the USB-PD power wedge: for wedge_hold_s (10 s) the GPU is
//       >= 90 % busy with the SM clock at or below 800 MHz and under 40 W, and no clock-event
//       reason bit is set (the wedged units read every reason "Not Active": 611-721 MHz at
//       10-16 W, eugr/spark-vllm-docker#334, 2026-08-06). NVCheckup's GEMM test calls < 1400 MHz
//       under 40 W a wedge; a run is no GEMM, and memory-bound decode holds > 1000 MHz at
//       15-20 W (joeynyc/spark-doctor), so watch takes the stuck band, <= 800 MHz.
//   driver_error (warn; info for the Xids of a program's own fault)  a kernel-log record of the
//       sample (Sample::kernel) is one facts/kernel_log.h classifies: an RM allocation failure
//       (NV_ERR_NO_MEMORY: hundreds of them before the silent host wedge, ogkm#1358), an Xid,
//       a GSP or start-up failure, a bad register read. One event per kind (per Xid number)
//       an episode.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "model/runlog.h"

namespace sparkdoc::watch {

struct DetectorConfig {
  bool dgx_spark = false;                    // GB10 wording and the degraded-power-state rule
  bool unified_memory = false;               // the GPU allocates from host memory
  std::map<unsigned, double> power_limit_w;  // enforced limits, where NVML reads one

  double clear_after_s = 30;
  double plateau_window_s = 60;
  double plateau_min_spread_w = 5;
  double plateau_spread_fraction = 0.05;
  double plateau_min_rise_c = 3;
  double plateau_busy_pct = 80;
  double plateau_near_limit = 0.85;
  double slowdown_min_fraction = 0.10;
  double drop_busy_pct = 50;
  double drop_fraction = 0.75;
  double degraded_busy_pct = 90;
  unsigned degraded_clock_mhz = 1000;
  double heavy_process_bytes = 1024.0 * 1024 * 1024;
  double psi_some_warn_pct = 10;
  double psi_full_warn_pct = 2;
  double low_available_bytes = 16.0 * 1024 * 1024 * 1024;
  double low_available_fraction = 1.0 / 8;
  double falling_window_s = 30;
  double falling_fraction = 0.10;
  double collapse_window_s = 15;
  double collapse_fraction = 0.15;
  double collapse_below_fraction = 0.25;
  double cache_window_s = 60;
  double cache_min_growth_bytes = 2.0 * 1024 * 1024 * 1024;
  double cache_growth_fraction = 0.03;
  double load_gpu_growth_bytes = 1024.0 * 1024 * 1024;
  double load_available_fraction = 0.03;
  double wedge_busy_pct = 90;
  unsigned wedge_clock_mhz = 800;
  double wedge_power_w = 40;
  double wedge_hold_s = 10;
};

// The rules for the machine a header describes: DGX Spark's, and the GPUs' power limits.
DetectorConfig detector_config(const runlog::LogHeader& header);

class Detectors {
 public:
  explicit Detectors(DetectorConfig config);
  Detectors(Detectors&&) noexcept;
  Detectors& operator=(Detectors&&) noexcept;
  ~Detectors();

  // The events this sample raises, in detector order. Samples must come in time order.
  std::vector<runlog::Event> feed(const runlog::Sample& sample);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Every event a stream of samples raises.
std::vector<runlog::Event> detect(const DetectorConfig& config,
                                  const std::vector<runlog::Sample>& samples);

}  // namespace sparkdoc::watch
