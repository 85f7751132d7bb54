// G4 thermal throttling and power (002 G4; reference §2.2, §2.3, §6).
//
// Rule, per NVML device:
//   DGX Spark: the GB10 SoC's TDP is 140 W and in practice it sustains about 100 W (240 W is the
//   external power brick, not the chip). WARN when
//     - HW thermal, HW slowdown, HW power brake or SW thermal clock-event reasons are active;
//     - utilization >= 90% while the SM clock is < 1000 MHz: the degraded USB-PD power state
//       (clocks stuck at 500-850 MHz against ~2400 MHz), cleared only by a full power cycle;
//     - temperature >= 90 C (heavy load reads 83-92 C; forced shutdowns start not far above).
//   Otherwise INFO with temperature, power against the ~100 W sustained figure, SM clock,
//   active reasons and the cumulative slowdown counters (GB10 often shows no active reason
//   while the SW power-cap counter has run for hours, so both are shown).
//   Other GPUs: power against the enforced limit; WARN when a thermal or HW slowdown reason is
//   active, INFO otherwise.
//   SKIP when NVML was not read or lists no device.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/platform.h"
#include "model/clock_events.h"

namespace sparkdoc::checks::g4 {
namespace {

constexpr std::string_view kId = "G4";
constexpr unsigned kHotC = 90;
constexpr unsigned kBusyPct = 90;
constexpr unsigned kDegradedClockMhz = 1000;
constexpr uint64_t kSlowdownMask = gpu::kReasonSwThermal | gpu::kReasonHwThermal |
                                   gpu::kReasonHwSlowdown | gpu::kReasonHwPowerBrake;
constexpr std::string_view kSparkCoolingFix =
    "improve airflow, cap clocks (sudo sparkdoc clean --yes --cap-clocks: 300-2200 MHz, about "
    "32 W; as nvidia-smi -lgc 300,2200, undone by sparkdoc clean --restore) or split the run into "
    "shorter pieces";
constexpr std::string_view kPowerCycleFix =
    "power-cycle fully: unplug the brick from the wall and from the Spark, wait 60 s";

std::string power_text(const gpu::Device& d, bool spark) {
  if (!d.power_usage_mw.ok()) return "power not read (" + d.power_usage_mw.reason() + ")";
  std::string draw = format_watts(*d.power_usage_mw);
  if (spark) return draw + " of ~100 W sustained (140 W TDP)";
  if (d.power_limit_mw.ok())
    return draw + " of " + format_watts(*d.power_limit_mw) + " enforced limit";
  return draw;
}

std::string clock_text(const gpu::Device& d) {
  if (!d.sm_clock_mhz.ok()) return "";
  if (d.max_sm_clock_mhz.ok()) {
    return fmt::format("SM {} of {} MHz", *d.sm_clock_mhz, *d.max_sm_clock_mhz);
  }
  return fmt::format("SM {} MHz", *d.sm_clock_mhz);
}

std::string reasons_text(const gpu::Device& d) {
  if (!d.clock_event_reasons.ok()) {
    return "clock event reasons not read (" + d.clock_event_reasons.reason() + ")";
  }
  auto names = gpu::active_clock_event_reasons(*d.clock_event_reasons);
  if (names.empty()) return "no clock event reasons active";
  return "clock event reasons active: " + join(names, ", ");
}

std::string counters_text(const gpu::ClockEventCounters& c) {
  struct Counter {
    const Reading<uint64_t>* value;
    std::string_view name;
  };
  const Counter counters[] = {{&c.sw_power_cap_ns, "SW power capping"},
                              {&c.sw_thermal_ns, "SW thermal slowdown"},
                              {&c.hw_thermal_ns, "HW thermal slowdown"},
                              {&c.hw_power_brake_ns, "HW power braking"},
                              {&c.sync_boost_ns, "sync boost"}};
  std::vector<std::string> parts;
  bool any_read = false;
  for (const auto& counter : counters) {
    if (!counter.value->ok()) continue;
    any_read = true;
    if (**counter.value > 0) {
      parts.push_back(fmt::format("{} {}", counter.name, format_duration_ns(**counter.value)));
    }
  }
  if (!any_read) return "";
  if (parts.empty()) return "no slowdown time since driver load";
  return join(parts, ", ") + " since driver load";
}

std::string reading_line(const gpu::Device& d, bool spark) {
  std::string temp =
      d.temperature_c.ok() ? fmt::format("{} C", *d.temperature_c) : "temperature not read";
  std::vector<std::string> groups{temp + ", " + power_text(d, spark)};
  if (auto clock = clock_text(d); !clock.empty()) groups.push_back(clock);
  groups.push_back(reasons_text(d));
  if (auto counters = counters_text(d.clock_event_counters); !counters.empty()) {
    groups.push_back(counters);
  }
  return join(groups, "; ");
}

// What is wrong on one device, each with its fix; empty when nothing is.
std::vector<std::string> concerns(const gpu::Device& d, bool spark) {
  std::vector<std::string> out;
  if (d.clock_event_reasons.ok()) {
    if (uint64_t slow = *d.clock_event_reasons & kSlowdownMask) {
      std::string temp = d.temperature_c.ok() ? fmt::format(" at {} C", *d.temperature_c) : "";
      out.push_back(
          fmt::format("{} active{}: clocks are cut for heat or power; {}",
                      join(gpu::active_clock_event_reasons(slow), ", "), temp,
                      spark ? kSparkCoolingFix : "check cooling and nvidia-smi -q -d PERFORMANCE"));
    }
  }
  if (!spark) return out;
  if (d.utilization_pct.ok() && d.sm_clock_mhz.ok() && *d.utilization_pct >= kBusyPct &&
      *d.sm_clock_mhz < kDegradedClockMhz) {
    out.push_back(
        fmt::format("{}% utilization at SM {} MHz (below {} MHz): the Spark looks stuck "
                    "in a degraded USB-PD power state; {}",
                    *d.utilization_pct, *d.sm_clock_mhz, kDegradedClockMhz, kPowerCycleFix));
  }
  // An active thermal reason above already names the temperature and the cooling fix.
  bool thermal_said = d.clock_event_reasons.ok() && (*d.clock_event_reasons & kSlowdownMask);
  if (!thermal_said && d.temperature_c.ok() && *d.temperature_c >= kHotC) {
    out.push_back(fmt::format("{} C is at or above {} C, the edge of GB10's heavy-load range; {}",
                              *d.temperature_c, kHotC, kSparkCoolingFix));
  }
  return out;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  if (!s.gpu.nvml.ok()) {
    return make_finding(kId, Verdict::kSkip, "NVML not read: " + s.gpu.nvml.reason());
  }
  const auto& devices = s.gpu.nvml->devices;
  if (devices.empty()) return make_finding(kId, Verdict::kSkip, "NVML lists no devices");
  bool spark = p.kind == facts::PlatformKind::kDgxSpark;
  bool many = devices.size() > 1;

  std::vector<std::string> details;
  std::vector<std::string> problems;
  for (const auto& d : devices) {
    std::string prefix = many ? fmt::format("GPU {}: ", d.index) : "";
    details.push_back(fmt::format("GPU {}: {}", d.index, reading_line(d, spark)));
    for (auto& c : concerns(d, spark)) problems.push_back(prefix + c);
  }
  if (!problems.empty()) return make_finding(kId, Verdict::kWarn, join(problems, "; "), details);
  if (!many)
    return make_finding(kId, Verdict::kInfo, reading_line(devices.front(), spark), details);

  // Several GPUs: ranges on the line, one line per device in the details.
  unsigned t_lo = UINT32_MAX, t_hi = 0;
  uint64_t w_lo = UINT64_MAX, w_hi = 0;
  bool any_reason = false;
  for (const auto& d : devices) {
    if (d.temperature_c.ok()) {
      t_lo = std::min(t_lo, *d.temperature_c);
      t_hi = std::max(t_hi, *d.temperature_c);
    }
    if (d.power_usage_mw.ok()) {
      w_lo = std::min<uint64_t>(w_lo, *d.power_usage_mw);
      w_hi = std::max<uint64_t>(w_hi, *d.power_usage_mw);
    }
    if (d.clock_event_reasons.ok() && (*d.clock_event_reasons & ~gpu::kReasonGpuIdle)) {
      any_reason = true;
    }
  }
  std::vector<std::string> parts{fmt::format("{} GPUs", devices.size())};
  if (t_hi > 0) parts.push_back(fmt::format("{}-{} C", t_lo, t_hi));
  if (w_hi > 0) {
    std::string limit = devices.front().power_limit_mw.ok()
                            ? " of " + format_watts(*devices.front().power_limit_mw) + " limit"
                            : "";
    parts.push_back(fmt::format("{}-{}{}", format_watts(w_lo), format_watts(w_hi), limit));
  }
  parts.push_back(any_reason ? "clock event reasons active on some (see details)"
                             : "no clock event reasons beyond idle");
  return make_finding(kId, Verdict::kInfo, join(parts, ", "), details);
}

}  // namespace
}  // namespace sparkdoc::checks::g4

namespace sparkdoc::checks {

const CheckInfo& g4_thermal_power() {
  static constexpr CheckInfo kInfo{
      .id = "G4",
      .title = "Thermal throttling and the ~100 W sustained power cap",
      .reads =
          "NVML per device: temperature, power draw and limit, SM clock and its maximum, "
          "utilization, clock-event reasons and the cumulative slowdown counters",
      .symptom =
          "Throughput drops partway through a multi-hour run, clocks fall, or the box reboots or "
          "powers off under sustained load",
      .cause =
          "GB10 sustains about 100 W in practice against a 140 W SoC TDP (240 W is the power "
          "brick's rating), so long runs sit at the power cap and heat up; a degraded USB-PD "
          "power state can also hold clocks under 1 GHz. Revised from the field reports of "
          "2026, which the seed's 240 W plateau rule predates: healthy load is 80-100 W, the "
          "power wedge 10-16 W at 500-850 MHz with every reason bit clear, and log-less hard "
          "power-offs start near 90 W sustained (EC/PSU protection or heat).",
      .how_checked =
          "Reads temperature, power, SM clock, the active clock-event reasons and the time spent "
          "power- or heat-capped since driver load; warns on active thermal or HW slowdown, on "
          "90 C and above, and on high utilization at an SM clock under 1000 MHz.",
      .fix =
          "Plan for ~100 W sustained; improve airflow or cap clocks (sudo sparkdoc clean --yes "
          "--cap-clocks, or sparkdoc run --cap-clocks for one command: 300-2200 MHz, as "
          "nvidia-smi -lgc 300,2200 after nvidia-persistenced; about 32 W and 66 C instead of 47 W "
          "and 72 C for a 1-5% decode cost; undone by sparkdoc clean --restore or nvidia-smi "
          "-rgc); "
          "for a stuck low-clock state, power-cycle fully (unplug the brick from the wall, wait "
          "60 s); watch long runs with sparkdoc watch.",
      .source =
          "002 G4; field 2026 §2: forum 361296 [2nd], tonyd2wild/dgx-spark-hard-poweroff-fix#31 "
          "(2026-08-14)",
      .keywords =
          "throttle throttling thermal temperature hot heat power watts slow slows slowdown "
          "partway mid-run throughput drop reboot reboots shutdown clocks 100w 240w tdp degraded",
      .run = &g4::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
