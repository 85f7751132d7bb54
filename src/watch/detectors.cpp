#include "watch/detectors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "core/strings.h"
#include "core/units.h"
#include "facts/kernel_log.h"
#include "facts/memory.h"
#include "facts/throttle.h"
#include "model/clock_events.h"
#include "model/gpu.h"

namespace sparkdoc::watch {
namespace {

using runlog::Event;
using runlog::EventSeverity;
using runlog::GpuProcessUse;
using runlog::GpuSample;
using runlog::Sample;

// An episode of a condition with a level (0 = absent). update() returns the level to report
// when it rises above the highest one reported in the current episode, else 0; the episode
// ends once the level has been 0 for clear_after_s.
class Episode {
 public:
  int update(int level, double ts, double clear_after_s) {
    if (level > 0) {
      last_active_ts_ = ts;
      if (level > reported_) {
        reported_ = level;
        return level;
      }
      return 0;
    }
    if (reported_ > 0 && ts - last_active_ts_ >= clear_after_s) reported_ = 0;
    return 0;
  }
  bool start(bool active, double ts, double clear_after_s) {
    return update(active ? 1 : 0, ts, clear_after_s) > 0;
  }

 private:
  int reported_ = 0;
  double last_active_ts_ = 0;
};

// Keeps the points of the last `window_s` seconds and the newest point at least that old, so
// the front tells whether the history covers the whole window.
template <class Point>
void trim_history(std::deque<Point>& history, double now, double window_s) {
  while (history.size() >= 2 && now - history[1].ts >= window_s) history.pop_front();
}

struct GpuPoint {
  double ts = 0;
  std::optional<double> power_w;
  std::optional<unsigned> temp_c;
  std::optional<unsigned> util_pct;
};

using CounterField = std::optional<uint64_t> runlog::ClockCounters::*;

struct SlowdownGroup {
  std::string_view label;
  uint64_t reason_bits;
  std::array<CounterField, 3> counters;  // null members unused
  EventSeverity severity;
  std::string_view advice;
  std::string_view spark_advice;
};

// Slowdowns grouped by cause, so that one cause raises one event however many of NVML's bits
// and counters show it.
const std::array<SlowdownGroup, 4> kSlowdownGroups = {{
    {"power capping",
     facts::kPowerCapReasons,
     {&runlog::ClockCounters::power, &runlog::ClockCounters::board_limit, nullptr},
     EventSeverity::kInfo,
     "The GPU is at its power limit: expected under full load; throughput is bounded by power.",
     "DGX Spark sustains about 100 W (G4): expected under full load, and why throughput stays "
     "below the datasheet's; use the supplied 240 W adapter and keep the vents clear."},
    {"thermal slowdown",
     facts::kThermalReasons,
     {&runlog::ClockCounters::thermal, &runlog::ClockCounters::sw_thermal,
      &runlog::ClockCounters::hw_thermal},
     EventSeverity::kWarn,
     "The GPU is too hot: improve airflow, check that the intake is clear, or cap clocks "
     "(sudo sparkdoc run --cap-clocks=MIN,MAX -- CMD, as nvidia-smi -lgc MIN,MAX).",
     "The GPU is too hot (G4): improve airflow, cap clocks (sudo sparkdoc clean --yes "
     "--cap-clocks: 300-2200 MHz, about 32 W; as nvidia-smi -lgc 300,2200, undone by sparkdoc "
     "clean --restore) or split the run into shorter pieces; a Spark that keeps heating can "
     "switch off under sustained load."},
    {"hardware slowdown or power brake",
     facts::kHardwareSlowdownReasons,
     {&runlog::ClockCounters::hw_power_brake, nullptr, nullptr},
     EventSeverity::kWarn,
     "The board asked for less power (an external power-supply or thermal signal): check the "
     "power supply and cooling.",
     "The board asked for less power: use the supplied 240 W adapter; if clocks stay low, "
     "power-cycle fully (unplug the brick from the wall and from the Spark, wait 60 s)."},
    {"reliability limit",
     0,
     {&runlog::ClockCounters::reliability, nullptr, nullptr},
     EventSeverity::kInfo,
     "The driver held clocks down to stay within voltage and current limits; nothing to do "
     "unless it persists.",
     "The driver held clocks down to stay within voltage and current limits; nothing to do "
     "unless it persists."},
}};

struct GpuState {
  std::deque<GpuPoint> history;
  Episode plateau;
  Episode drop;
  std::array<Episode, kSlowdownGroups.size()> slowdown;
  // The latest sample that carried counters (the sampler reads them every few seconds), and
  // what they showed for each slowdown group over the step that ended there: a sample without
  // counters keeps that verdict until the next reading.
  std::optional<double> counters_ts;
  runlog::ClockCounters counters;
  std::array<double, kSlowdownGroups.size()> counter_fraction{};
  double counter_span_s = 0;
  unsigned peak_busy_sm_mhz = 0;
  std::optional<std::map<uint32_t, GpuProcessUse>> processes;  // none before the first list
  std::optional<double> wedged_since;  // when the power-wedge condition began to hold
  Episode wedge;
};

struct HostPoint {
  double ts = 0;
  std::optional<uint64_t> available;
  std::optional<uint64_t> cached;
  std::optional<uint64_t> gpu_bytes;
};

std::string who(const GpuProcessUse& p) {
  return p.name ? fmt::format("PID {} ({})", p.pid, *p.name) : fmt::format("PID {}", p.pid);
}

std::string bytes_text(std::optional<uint64_t> bytes) {
  return bytes ? format_gb(*bytes) : std::string("an unknown amount");
}

double gb(double bytes) {
  return bytes / 1e9;
}

// Memory the GPUs hold: NVML's framebuffer figure where it reads one, else the processes' sum
// (GB10 has no framebuffer figure). Absent when neither is known for some GPU.
std::optional<uint64_t> gpu_bytes(const Sample& s) {
  uint64_t total = 0;
  for (const GpuSample& g : s.gpus) {
    if (g.mem_used_bytes) {
      total += *g.mem_used_bytes;
    } else if (g.processes) {
      for (const GpuProcessUse& p : *g.processes) total += p.used_bytes.value_or(0);
    } else {
      return std::nullopt;
    }
  }
  return total;
}

// Power and temperature over a window of GPU points; absent when a point lacks either.
struct PowerWindow {
  double low = 0;
  double high = 0;
  double mean = 0;
  std::optional<double> util;  // mean utilisation; absent when a point lacks it
  unsigned first_c = 0;
  unsigned last_c = 0;
  unsigned max_c = 0;
};

std::optional<PowerWindow> power_window(const std::deque<GpuPoint>& points) {
  PowerWindow w;
  w.low = std::numeric_limits<double>::max();
  w.high = std::numeric_limits<double>::lowest();
  double util = 0;
  bool util_known = true;
  for (const GpuPoint& p : points) {
    if (!p.power_w || !p.temp_c) return std::nullopt;
    w.low = std::min(w.low, *p.power_w);
    w.high = std::max(w.high, *p.power_w);
    w.mean += *p.power_w;
    w.max_c = std::max(w.max_c, *p.temp_c);
    util_known = util_known && p.util_pct.has_value();
    util += p.util_pct.value_or(0);
  }
  double n = static_cast<double>(points.size());
  w.mean /= n;
  if (util_known) w.util = util / n;
  w.first_c = *points.front().temp_c;
  w.last_c = *points.back().temp_c;
  return w;
}

}  // namespace

struct Detectors::State {
  DetectorConfig config;
  size_t index = 0;  // of the sample being judged
  std::map<unsigned, GpuState> gpus;
  std::deque<HostPoint> host;
  Episode pressure;
  Episode cache;
  Episode collapse;
  std::map<std::pair<facts::DriverEvent, int>, Episode> driver;  // by kind and Xid number

  Event event(const Sample& s, std::string_view kind, EventSeverity severity,
              std::optional<unsigned> gpu, std::string message) const {
    Event e;
    e.ts = s.ts;
    e.kind = std::string(kind);
    e.severity = severity;
    e.gpu = gpu;
    e.message = std::move(message);
    e.sample = index;
    return e;
  }

  void plateau(const Sample& s, const GpuSample& g, GpuState& st, std::vector<Event>& out) {
    const DetectorConfig& c = config;
    trim_history(st.history, s.ts, c.plateau_window_s);
    std::optional<PowerWindow> w;
    if (s.ts - st.history.front().ts >= c.plateau_window_s) w = power_window(st.history);
    bool active = false;
    auto limit = c.power_limit_w.find(g.index);
    if (w) {
      bool flat =
          w->high - w->low <= std::max(c.plateau_min_spread_w, c.plateau_spread_fraction * w->mean);
      bool climbing = w->last_c >= w->first_c + c.plateau_min_rise_c && w->last_c + 1 >= w->max_c;
      bool busy = w->util && *w->util >= c.plateau_busy_pct;
      // With a known limit, a mean near it is the evidence (a missing utilisation is no
      // counter-evidence); without one (GB10), only a busy GPU's flat power is a cap.
      bool at_cap = limit != c.power_limit_w.end()
                        ? w->mean >= c.plateau_near_limit * limit->second && (busy || !w->util)
                        : busy;
      active = flat && climbing && at_cap;
    }
    if (!st.plateau.start(active, s.ts, c.clear_after_s)) return;
    double span = s.ts - st.history.front().ts;
    std::string what = fmt::format(
        "GPU {}: power has held at {:.1f}-{:.1f} W for {:.0f} s{} while the temperature climbed "
        "{} -> {} C: the GPU is power-limited (G4). ",
        g.index, w->low, w->high, span,
        w->util ? fmt::format(" at {:.0f}% utilisation", *w->util) : std::string(), w->first_c,
        w->last_c);
    if (c.dgx_spark) {
      what +=
          "DGX Spark sustains about 100 W, not the 240 W of its adapter, so throughput drops "
          "and long runs can switch the box off: improve airflow, cap clocks (sudo sparkdoc clean "
          "--yes --cap-clocks: 300-2200 MHz, about 32 W instead of 47 W; as nvidia-smi -lgc "
          "300,2200, undone by sparkdoc clean --restore) or split the run into shorter pieces.";
    } else if (limit != c.power_limit_w.end()) {
      what += fmt::format(
          "That is {:.0f}% of the {:.0f} W enforced limit: throughput is bounded by power; if the "
          "temperature keeps climbing, improve cooling.",
          100.0 * w->mean / limit->second, limit->second);
    } else {
      what += "Throughput is bounded by power; if the temperature keeps climbing, improve cooling.";
    }
    out.push_back(
        event(s, runlog::kPowerCapPlateau, EventSeverity::kWarn, g.index, std::move(what)));
  }

  // The slowdown groups active in this sample, with the evidence for each.
  void slowdown(const Sample& s, const GpuSample& g, GpuState& st, std::vector<Event>& out,
                std::vector<std::string_view>& active_labels) {
    const DetectorConfig& c = config;
    bool fresh = !g.counters.empty();
    double dt = fresh && st.counters_ts ? s.ts - *st.counters_ts : 0;
    if (fresh) st.counter_span_s = dt;
    for (size_t i = 0; i < kSlowdownGroups.size(); ++i) {
      const SlowdownGroup& group = kSlowdownGroups[i];
      uint64_t bits = g.clock_event_reasons.value_or(0) & group.reason_bits;
      if (fresh) {
        double fraction = 0;
        if (dt > 0) {
          for (CounterField field : group.counters) {
            if (field == nullptr) continue;
            const auto& now = g.counters.*field;
            const auto& before = st.counters.*field;
            // A counter that went backwards was reset (driver reload): no evidence either way.
            if (!now || !before || *now < *before) continue;
            fraction = std::max(fraction, static_cast<double>(*now - *before) / (dt * 1e9));
          }
        }
        st.counter_fraction[i] = std::min(fraction, 1.0);
      }
      double fraction = st.counter_fraction[i];
      bool by_counter = fraction >= c.slowdown_min_fraction;
      bool active = bits != 0 || by_counter;
      if (active) active_labels.push_back(group.label);
      if (!st.slowdown[i].start(active, s.ts, c.clear_after_s)) continue;
      std::vector<std::string> evidence;
      if (bits != 0) {
        evidence.push_back("clock-event reasons: " + gpu::describe_clock_event_reasons(bits));
      }
      if (by_counter) {
        std::string counted = fmt::format(
            "NVML's counters show it for {:.0f}% of the last {:.1f} s", 100.0 * fraction,
            st.counter_span_s);
        if (bits == 0 && g.clock_event_reasons && group.reason_bits != 0) {
          counted += " while the reason bits read none, as on a capped GB10";
        }
        evidence.push_back(std::move(counted));
      }
      std::string clock = g.sm_clock_mhz ? fmt::format("; SM clock {} MHz", *g.sm_clock_mhz) : "";
      out.push_back(event(s, runlog::kClockSlowdown, group.severity, g.index,
                          fmt::format("GPU {}: clocks held down by {} ({}){}. {}", g.index,
                                      group.label, join(evidence, "; "), clock,
                                      c.dgx_spark ? group.spark_advice : group.advice)));
    }
  }

  void clock_drop(const Sample& s, const GpuSample& g, GpuState& st, std::vector<Event>& out,
                  const std::vector<std::string_view>& causes) {
    const DetectorConfig& c = config;
    if (!g.sm_clock_mhz || !g.util_pct) {
      st.drop.start(false, s.ts, c.clear_after_s);
      return;
    }
    unsigned sm = *g.sm_clock_mhz;
    double util = *g.util_pct;
    bool busy = util >= c.drop_busy_pct;
    bool dropped = busy && st.peak_busy_sm_mhz > 0 &&
                   sm < c.drop_fraction * static_cast<double>(st.peak_busy_sm_mhz);
    bool degraded = c.dgx_spark && util >= c.degraded_busy_pct && sm < c.degraded_clock_mhz;
    unsigned peak = st.peak_busy_sm_mhz;
    if (busy) st.peak_busy_sm_mhz = std::max(st.peak_busy_sm_mhz, sm);
    if (!st.drop.start(dropped || degraded, s.ts, c.clear_after_s)) return;
    std::string what =
        fmt::format("GPU {}: SM clock is {} MHz at {:.0f}% utilisation", g.index, sm, util);
    if (dropped) {
      what += fmt::format(", down from {} MHz earlier in this run (-{:.0f}%)", peak,
                          100.0 * (1.0 - static_cast<double>(sm) / peak));
    }
    what += ".";
    if (degraded) {
      what +=
          " This is DGX Spark's degraded power state (clocks stuck at 500-850 MHz against "
          "~2400 MHz, 60-80% slower), invisible to the clock-event reasons: power-cycle fully "
          "(unplug the brick from the wall and from the Spark, wait 60 s).";
    } else if (!causes.empty()) {
      std::vector<std::string> names(causes.begin(), causes.end());
      what += " Cause shown by NVML: " + join(names, ", ") + ".";
    } else {
      what += " NVML shows no slowdown reason; if it persists, check power delivery and cooling.";
    }
    out.push_back(event(s, runlog::kSmClockDrop, EventSeverity::kWarn, g.index, std::move(what)));
  }

  void power_wedge(const Sample& s, const GpuSample& g, GpuState& st, std::vector<Event>& out) {
    const DetectorConfig& c = config;
    bool now = c.dgx_spark && g.util_pct && g.sm_clock_mhz && g.power_w &&
               *g.util_pct >= c.wedge_busy_pct && *g.sm_clock_mhz <= c.wedge_clock_mhz &&
               *g.power_w < c.wedge_power_w && g.clock_event_reasons.value_or(0) == 0;
    if (!now) {
      st.wedged_since.reset();
    } else if (!st.wedged_since) {
      st.wedged_since = s.ts;
    }
    bool held = st.wedged_since && s.ts - *st.wedged_since >= c.wedge_hold_s;
    if (!st.wedge.start(held, s.ts, c.clear_after_s)) return;
    out.push_back(
        event(s, runlog::kPowerWedge, EventSeverity::kWarn, g.index,
              fmt::format(
                  "GPU {}: {} MHz at {}% utilisation and {:.1f} W for {:.0f} s with no clock-event "
                  "reason: the USB-PD power wedge (healthy load runs 2200-2600 MHz at 80-100 W). "
                  "Stop the run, unplug the Spark and its power brick from the wall for 60 s; "
                  "if it returns, ask the vendor (RMA).",
                  g.index, *g.sm_clock_mhz, *g.util_pct, *g.power_w, s.ts - *st.wedged_since)));
  }

  void processes(const Sample& s, const GpuSample& g, GpuState& st, std::vector<Event>& out) {
    if (!g.processes) return;
    std::map<uint32_t, GpuProcessUse> now;
    for (const GpuProcessUse& p : *g.processes) now[p.pid] = p;
    if (st.processes) {
      for (const auto& [pid, p] : now) {
        if (st.processes->count(pid)) continue;
        std::vector<std::string> heavy;
        for (const auto& [other_pid, other] : now) {
          if (other_pid != pid && other.used_bytes &&
              static_cast<double>(*other.used_bytes) >= config.heavy_process_bytes) {
            heavy.push_back(who(other) + " holds " + format_gb(*other.used_bytes));
          }
        }
        std::string what =
            fmt::format("{} started using GPU {} ({}).", who(p), g.index, bytes_text(p.used_bytes));
        if (!heavy.empty()) {
          what += fmt::format(
              " {}: two heavy jobs on one GPU compete for its memory and one can be evicted or "
              "fail silently (G6); if this is not yours, cap or stop it.",
              join(heavy, ", "));
        }
        Event e = event(s, runlog::kNewGpuProcess,
                        heavy.empty() ? EventSeverity::kInfo : EventSeverity::kWarn, g.index,
                        std::move(what));
        e.pid = pid;
        out.push_back(std::move(e));
      }
      for (const auto& [pid, p] : *st.processes) {
        if (now.count(pid)) continue;
        Event e = event(s, runlog::kGpuProcessExit, EventSeverity::kInfo, g.index,
                        fmt::format("{} is no longer on GPU {}; it held {}.", who(p), g.index,
                                    bytes_text(p.used_bytes)));
        e.pid = pid;
        out.push_back(std::move(e));
      }
    }
    st.processes = std::move(now);
  }

  void gpu(const Sample& s, const GpuSample& g, std::vector<Event>& out) {
    GpuState& st = gpus[g.index];
    st.history.push_back(GpuPoint{s.ts, g.power_w, g.temp_c, g.util_pct});
    plateau(s, g, st, out);
    std::vector<std::string_view> causes;
    slowdown(s, g, st, out, causes);
    clock_drop(s, g, st, out, causes);
    power_wedge(s, g, st, out);
    processes(s, g, st, out);
    if (!g.counters.empty()) {
      st.counters_ts = s.ts;
      st.counters = g.counters;
    }
  }

  // The NVIDIA driver's kernel-log records of this sample, one event per kind (and per Xid
  // number) an episode.
  void driver_errors(const Sample& s, std::vector<Event>& out) {
    std::map<std::pair<facts::DriverEvent, int>, std::pair<size_t, std::string>> seen;
    for (const std::string& record : s.kernel) {
      facts::DriverEventKind k = facts::classify_driver_record(record);
      if (k.kind == facts::DriverEvent::kNone) continue;
      auto [it, fresh] = seen.try_emplace({k.kind, k.xid.value_or(0)}, 0, record);
      ++it->second.first;
    }
    // Records are sparse: an episode ends once its kind has been absent for clear_after_s,
    // judged at every sample, this one included.
    for (auto& [key, episode] : driver) episode.update(0, s.ts, config.clear_after_s);
    for (const auto& [key, found] : seen) {
      if (!driver[key].start(true, s.ts, config.clear_after_s)) continue;
      const auto& [count, first] = found;
      std::string record = first.size() > 160 ? first.substr(0, 160) + "..." : first;
      std::string times = count == 1 ? "" : fmt::format(" ({} records)", count);
      EventSeverity severity = EventSeverity::kWarn;
      std::string advice;
      switch (key.first) {
        case facts::DriverEvent::kNoMemory:
          advice = config.unified_memory
                       ? "The driver could not allocate: on a DGX Spark hundreds of these came "
                         "before the silent host wedge (NVIDIA open-gpu-kernel-modules#1358). "
                         "Save a checkpoint now and lower the memory the run holds."
                       : "The driver could not allocate GPU memory: the run is near its limit.";
          break;
        case facts::DriverEvent::kXid:
          if (facts::xid_is_application_fault(key.second)) {
            severity = EventSeverity::kInfo;
            advice = fmt::format(
                "Xid {} is a program's own GPU fault (a crashed kernel), not a "
                "sick GPU.",
                key.second);
          } else if (facts::xid_needs_reset(key.second)) {
            advice = fmt::format(
                "Xid {}: the GPU needs a reset or the driver its firmware back "
                "(reboot; sparkdoc check's F1 and F2 say whether the driver "
                "left its pairing).",
                key.second);
          } else {
            advice = fmt::format("Xid {}: see `sparkdoc explain F2`.", key.second);
          }
          break;
        case facts::DriverEvent::kGspOrInit:
          advice =
              "The driver's GSP firmware or start-up failed: reboot, and check the driver "
              "against DGX OS's pairing (sparkdoc check, F1).";
          break;
        case facts::DriverEvent::kBadRegister:
          advice = "A register read returned 0xbadf5600: a hardware fault (RMA).";
          break;
        case facts::DriverEvent::kNone:
          continue;
      }
      out.push_back(event(s, runlog::kDriverError, severity, std::nullopt,
                          fmt::format("Kernel log: {}{}. {}", record, times, advice)));
    }
  }

  void memory(const Sample& s, std::vector<Event>& out) {
    const runlog::HostMemorySample& m = s.mem;
    host.push_back(HostPoint{
        s.ts, m.available_bytes,
        facts::page_cache_bytes(m.cached_bytes, m.buffers_bytes, m.shmem_bytes), gpu_bytes(s)});
    trim_history(
        host, s.ts,
        std::max({config.cache_window_s, config.falling_window_s, config.collapse_window_s}));
    if (!m.total_bytes || *m.total_bytes == 0) return;
    memory_pressure(s, static_cast<double>(*m.total_bytes), out);
    memory_collapse(s, static_cast<double>(*m.total_bytes), out);
    page_cache_growth(s, static_cast<double>(*m.total_bytes), out);
  }

  // On unified memory, MemAvailable falling fast into the last quarter of the pool: what the
  // silent host wedge's reports show before the freeze (field-2026 §1: 28.97 -> 6.27 GiB in
  // 11 s, vllm#56824; 34.0 -> 12.7 GiB in 1.5 s, playbooks#116).
  void memory_collapse(const Sample& s, double total, std::vector<Event>& out) {
    const DetectorConfig& c = config;
    const runlog::HostMemorySample& m = s.mem;
    bool active = false;
    double from = 0;
    double over_s = 0;
    if (c.unified_memory && m.available_bytes) {
      const double now = static_cast<double>(*m.available_bytes);
      for (const HostPoint& p : host) {
        if (s.ts - p.ts > c.collapse_window_s || !p.available) continue;
        const double before = static_cast<double>(*p.available);
        if (before - now > from - now && before - now >= c.collapse_fraction * total) {
          from = before;
          over_s = s.ts - p.ts;
        }
      }
      active = from > 0 && now < c.collapse_below_fraction * total;
    }
    if (!collapse.start(active, s.ts, c.clear_after_s)) return;
    out.push_back(event(
        s, runlog::kMemoryCollapse, EventSeverity::kWarn, std::nullopt,
        fmt::format("MemAvailable collapsed from {:.1f} to {:.1f} GB in {:.0f} s ({:.0f}% of "
                    "{:.1f} GB left). On DGX Spark such a fall came before the silent host wedge "
                    "(no OOM kill, no panic; vllm#56824: 28.97 to 6.27 GiB in 11 s), and the "
                    "driver's memory is bounded by no cgroup: save a checkpoint now, then lower "
                    "the batch size or gpu_memory_utilization (0.85 at most).",
                    gb(from), gb(static_cast<double>(*m.available_bytes)), std::max(over_s, 1.0),
                    100.0 * static_cast<double>(*m.available_bytes) / total, gb(total))));
  }

  void memory_pressure(const Sample& s, double total, std::vector<Event>& out) {
    const DetectorConfig& c = config;
    const runlog::HostMemorySample& m = s.mem;
    std::vector<std::string> pressed;
    if (m.psi_some_avg10 && *m.psi_some_avg10 >= c.psi_some_warn_pct) {
      pressed.push_back(fmt::format("tasks stalled on memory {:.1f}% of the last 10 s (PSI some)",
                                    *m.psi_some_avg10));
    }
    if (m.psi_full_avg10 && *m.psi_full_avg10 >= c.psi_full_warn_pct) {
      pressed.push_back(
          fmt::format("all tasks stalled {:.1f}% of it (PSI full)", *m.psi_full_avg10));
    }
    double floor = std::min(c.low_available_bytes, c.low_available_fraction * total);
    if (m.available_bytes && static_cast<double>(*m.available_bytes) < floor) {
      pressed.push_back(fmt::format("only {:.1f} GB available, below {:.1f} GB",
                                    gb(static_cast<double>(*m.available_bytes)), gb(floor)));
    }
    std::optional<double> fell;
    if (m.available_bytes) {
      uint64_t highest = 0;
      for (const HostPoint& p : host) {
        if (s.ts - p.ts <= c.falling_window_s && p.available)
          highest = std::max(highest, *p.available);
      }
      double drop = static_cast<double>(highest) - static_cast<double>(*m.available_bytes);
      if (drop >= c.falling_fraction * total &&
          static_cast<double>(*m.available_bytes) < 0.5 * total) {
        fell = drop;
      }
    }
    int level = !pressed.empty() ? 2 : fell ? 1 : 0;
    int reported = pressure.update(level, s.ts, c.clear_after_s);
    if (reported == 2) {
      out.push_back(event(
          s, runlog::kMemoryPressure, EventSeverity::kWarn, std::nullopt,
          fmt::format("Memory pressure: {}. {}", join(pressed, "; "),
                      c.unified_memory
                          ? "The GPU allocates from this same memory and its allocations can fail "
                            "before MemAvailable reaches 0: stop other memory users, lower the "
                            "batch size, or drop the page cache between runs (sparkdoc clean)."
                          : "Stop other memory users or lower the batch size before the kernel "
                            "starts swapping or killing processes.")));
    } else if (reported == 1) {
      out.push_back(event(
          s, runlog::kMemoryPressure, EventSeverity::kInfo, std::nullopt,
          fmt::format("MemAvailable fell {:.1f} GB within {:.0f} s to {:.1f} GB "
                      "({:.0f}% of {:.1f} GB): watch for memory pressure.",
                      gb(*fell), c.falling_window_s, gb(static_cast<double>(*m.available_bytes)),
                      100.0 * static_cast<double>(*m.available_bytes) / total, gb(total))));
    }
  }

  void page_cache_growth(const Sample& s, double total, std::vector<Event>& out) {
    const DetectorConfig& c = config;
    const runlog::HostMemorySample& m = s.mem;
    const std::optional<uint64_t> cache_now = host.back().cached;
    bool growing = false;
    double grew = 0;
    std::string load;
    if (cache_now) {
      // Lowest cache and GPU memory, highest MemAvailable, over the window.
      uint64_t lowest_cache = *cache_now;
      std::optional<uint64_t> lowest_gpu;
      uint64_t highest_available = m.available_bytes.value_or(0);
      for (const HostPoint& p : host) {
        if (s.ts - p.ts > c.cache_window_s) continue;
        if (p.cached) lowest_cache = std::min(lowest_cache, *p.cached);
        if (p.gpu_bytes && (!lowest_gpu || *p.gpu_bytes < *lowest_gpu)) lowest_gpu = p.gpu_bytes;
        if (p.available) highest_available = std::max(highest_available, *p.available);
      }
      grew = static_cast<double>(*cache_now - lowest_cache);
      std::optional<uint64_t> gpu_now = host.back().gpu_bytes;
      double gpu_grew = gpu_now && lowest_gpu ? static_cast<double>(*gpu_now - *lowest_gpu) : 0;
      double available_fell =
          m.available_bytes ? static_cast<double>(highest_available - *m.available_bytes) : 0;
      if (gpu_grew >= c.load_gpu_growth_bytes) {
        load = fmt::format("GPU memory grew {:.1f} GB", gb(gpu_grew));
      } else if (available_fell >= c.load_available_fraction * total) {
        load = fmt::format("MemAvailable fell {:.1f} GB", gb(available_fell));
      }
      growing = !load.empty() &&
                grew >= std::max(c.cache_min_growth_bytes, c.cache_growth_fraction * total);
    }
    if (cache.start(growing, s.ts, c.clear_after_s)) {
      out.push_back(event(
          s, runlog::kPageCacheGrowth,
          c.unified_memory ? EventSeverity::kWarn : EventSeverity::kInfo, std::nullopt,
          fmt::format("The page cache grew {:.1f} GB within {:.0f} s (now {:.1f} GB) while {}. {}",
                      gb(grew), c.cache_window_s, gb(static_cast<double>(*cache_now)), load,
                      c.unified_memory
                          ? "On unified memory the cache of the files being read competes with "
                            "the GPU's allocations (G3): drop it during the load (sparkdoc run "
                            "--drop-cache-every 20s) or before the run (sparkdoc clean)."
                          : "The kernel reclaims it under pressure; if the load fails for memory, "
                            "drop it first (sparkdoc clean).")));
    }
  }
};

DetectorConfig detector_config(const runlog::LogHeader& header) {
  DetectorConfig c;
  c.dgx_spark = header.platform == "dgx-spark";
  c.unified_memory = header.unified_memory || c.dgx_spark;
  for (const runlog::GpuInfo& g : header.gpus) {
    if (g.power_limit_w && *g.power_limit_w > 0) c.power_limit_w[g.index] = *g.power_limit_w;
  }
  return c;
}

Detectors::Detectors(DetectorConfig config) : state_(std::make_unique<State>()) {
  state_->config = std::move(config);
}
Detectors::Detectors(Detectors&&) noexcept = default;
Detectors& Detectors::operator=(Detectors&&) noexcept = default;
Detectors::~Detectors() = default;

std::vector<Event> Detectors::feed(const Sample& sample) {
  std::vector<Event> out;
  for (const GpuSample& g : sample.gpus) state_->gpu(sample, g, out);
  state_->memory(sample, out);
  state_->driver_errors(sample, out);
  ++state_->index;
  return out;
}

std::vector<Event> detect(const DetectorConfig& config, const std::vector<Sample>& samples) {
  Detectors detectors(config);
  std::vector<Event> all;
  for (const Sample& s : samples) {
    auto events = detectors.feed(s);
    all.insert(all.end(), events.begin(), events.end());
  }
  return all;
}

}  // namespace sparkdoc::watch
