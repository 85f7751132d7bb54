#include "report/run_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/printable.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"

namespace sparkdoc::report {
namespace {

using nlohmann::json;

// A word for a shell command line: bare when it is safe, else single-quoted.
std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+@%") == std::string::npos) {
    return w;
  }
  std::string out = "'";
  for (char c : w) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

json opt_json(const std::optional<double>& v) {
  return v ? json(*v) : json();
}
json opt_json(const std::optional<uint64_t>& v) {
  return v ? json(*v) : json();
}

}  // namespace

std::string format_elapsed(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  bool negative = seconds < 0;
  auto whole = static_cast<uint64_t>(std::llround(std::fabs(seconds)));
  std::string sign = negative && whole > 0 ? "-" : "";
  if (whole >= 3600) {
    return fmt::format("{}{}:{:02}:{:02}", sign, whole / 3600, (whole % 3600) / 60, whole % 60);
  }
  return fmt::format("{}{}:{:02}", sign, whole / 60, whole % 60);
}

std::string render_run_summary_text(const facts::RunSummary& s, size_t events_shown) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& text) {
    out += fmt::format("  {:<12} {}\n", label, text);
  };
  std::vector<std::string> words;
  // The logged command came from the log file: shown, never obeyed (core/printable.h).
  for (const auto& a : s.argv) words.push_back(printable(shell_word(a)));
  out += words.empty() ? std::string("sparkdoc run summary\n")
                       : fmt::format("sparkdoc run summary: {}\n", join(words, " "));
  if (s.end) {
    std::string how =
        s.end->signal ? fmt::format("killed by {} (status {})", *s.end->signal, s.end->exit_status)
                      : fmt::format("exit {}", s.end->exit_status);
    if (s.end->core_dumped) how += ", core dumped";
    how += " after " + format_duration(s.end->duration_s);
    if (!s.end->signals_forwarded.empty()) {
      how += "; forwarded " + join(s.end->signals_forwarded, ", ");
    }
    line("ended", how);
  } else if (s.duration_s) {
    line("duration", format_duration(*s.duration_s));
  }
  if (s.peak_gpu_mem_bytes) {
    std::string text =
        fmt::format("peak {} at {} ({})", format_gb(*s.peak_gpu_mem_bytes),
                    format_elapsed(s.peak_gpu_mem_at_s.value_or(0)),
                    s.gpu_mem_source == "device" ? "device total" : "sum of processes");
    if (!s.process_peaks.empty()) {
      const auto& p = s.process_peaks.front();
      text += p.name.empty()
                  ? fmt::format("; largest process pid {} {}", p.pid, format_gb(p.peak_bytes))
                  : fmt::format("; largest process {} (pid {}) {}", p.name, p.pid,
                                format_gb(p.peak_bytes));
    }
    line("GPU memory", text);
  }
  if (s.peak_host_used_bytes) {
    std::string text = fmt::format("peak {} used", format_gb(*s.peak_host_used_bytes));
    if (s.host_total_bytes) text += " of " + format_gb(*s.host_total_bytes);
    if (s.min_available_bytes) text += "; lowest available " + format_gb(*s.min_available_bytes);
    if (s.peak_page_cache_bytes) text += "; page cache peak " + format_gb(*s.peak_page_cache_bytes);
    if (s.peak_swap_used_bytes && *s.peak_swap_used_bytes > 0) {
      text += "; swap peak " + format_gb(*s.peak_swap_used_bytes);
    }
    line("host memory", text);
  }
  for (const auto& g : s.gpus) {
    std::vector<std::string> parts;
    if (g.power_capped_s) {
      std::string capped = "power-capped " + format_duration(*g.power_capped_s);
      if (s.duration_s && *s.duration_s > 0) {
        capped += fmt::format(" ({:.0f}% of the run)", 100.0 * *g.power_capped_s / *s.duration_s);
      }
      parts.push_back(capped);
      parts.push_back("slowed " + format_duration(g.slowed_s.value_or(0)) + " (" +
                      g.throttle_source + ")");
    } else {
      parts.push_back("time capped unknown (no clock-event readings)");
    }
    if (g.max_power_w) {
      std::string power = fmt::format("max {:.1f} W", *g.max_power_w);
      if (g.power_limit_w) power += fmt::format(" of {:.0f} W limit", *g.power_limit_w);
      parts.push_back(power);
    }
    if (g.max_temp_c) {
      parts.push_back(
          g.first_temp_c && *g.first_temp_c != *g.max_temp_c
              ? fmt::format("{:.0f} C at start, max {:.0f} C", *g.first_temp_c, *g.max_temp_c)
              : fmt::format("max {:.0f} C", *g.max_temp_c));
    }
    if (g.min_sm_clock_mhz && g.max_sm_clock_mhz) {
      parts.push_back(
          fmt::format("SM clock {:.0f}-{:.0f} MHz", *g.min_sm_clock_mhz, *g.max_sm_clock_mhz));
    }
    line(fmt::format("GPU {}", g.index), join(parts, "; "));
  }
  if (s.cache_drops > 0 || s.load_window_end) {
    std::string text = fmt::format("{} in the load window", s.cache_drops);
    if (s.cache_drop_failures > 0) text += fmt::format(" ({} failed)", s.cache_drop_failures);
    if (s.load_window_end) text += "; stopped: " + *s.load_window_end;
    line("cache drops", text);
  }
  if (s.events.empty()) {
    line("events", s.samples > 0 ? "none" : "none (no telemetry)");
  } else {
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : s.events_by_kind) kinds.push_back(fmt::format("{} {}", kind, n));
    line("events",
         fmt::format("{} ({} warn): {}", s.events.size(), s.warn_events, join(kinds, ", ")));
    size_t shown = 0;
    for (const auto& e : s.events) {
      if (shown++ == events_shown) {
        out += fmt::format("    ... {} more (sparkdoc report shows all)\n",
                           s.events.size() - events_shown);
        break;
      }
      out += fmt::format("    {:>8} {:<4} {}: {}\n", format_elapsed(e.ts - s.origin_ts),
                         runlog::severity_name(e.severity), e.kind, e.message);
    }
  }
  if (s.end) {
    for (const auto& r : s.end->restored) {
      line("restored", r.ok ? fmt::format("{} = {}", r.path, r.value)
                            : fmt::format("NOT {} = {}: {}", r.path, r.value, r.error));
    }
    for (const auto& n : s.end->notes) line("note", n);
  }
  for (const auto& n : s.notes) line("note", n);
  return out;
}

json render_run_summary_json(const facts::RunSummary& s) {
  json gpus = json::array();
  for (const auto& g : s.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"power_limit_w", opt_json(g.power_limit_w)},
                    {"max_power_w", opt_json(g.max_power_w)},
                    {"first_temp_c", opt_json(g.first_temp_c)},
                    {"max_temp_c", opt_json(g.max_temp_c)},
                    {"min_sm_clock_mhz", opt_json(g.min_sm_clock_mhz)},
                    {"max_sm_clock_mhz", opt_json(g.max_sm_clock_mhz)},
                    {"power_capped_s", opt_json(g.power_capped_s)},
                    {"slowed_s", opt_json(g.slowed_s)},
                    {"throttle_source", g.throttle_source}});
  }
  json procs = json::array();
  for (const auto& p : s.process_peaks) {
    procs.push_back({{"pid", p.pid}, {"name", p.name}, {"peak_bytes", p.peak_bytes}});
  }
  json events = json::array();
  for (const auto& e : s.events) {
    events.push_back({{"t", format_iso8601_utc(e.ts, TimePrecision::kMillis)},
                      {"elapsed_s", e.ts - s.origin_ts},
                      {"kind", e.kind},
                      {"severity", runlog::severity_name(e.severity)},
                      {"gpu", e.gpu ? json(*e.gpu) : json()},
                      {"message", e.message}});
  }
  json end;
  if (s.end) {
    json restored = json::array();
    for (const auto& r : s.end->restored) {
      restored.push_back({{"path", r.path}, {"value", r.value}, {"ok", r.ok}, {"error", r.error}});
    }
    end = {{"exit_status", s.end->exit_status},
           {"exit_code", s.end->exit_code ? json(*s.end->exit_code) : json()},
           {"signal", s.end->signal ? json(*s.end->signal) : json()},
           {"core_dumped", s.end->core_dumped},
           {"signals_forwarded", s.end->signals_forwarded},
           {"restored", restored},
           {"notes", s.end->notes}};
  }
  return {{"host", s.host},
          {"platform", s.platform},
          {"started", s.started},
          {"argv", s.argv},
          {"duration_s", opt_json(s.duration_s)},
          {"samples", s.samples},
          {"interval_s", opt_json(s.interval_s)},
          {"gpu_memory",
           {{"peak_bytes", opt_json(s.peak_gpu_mem_bytes)},
            {"peak_at_s", opt_json(s.peak_gpu_mem_at_s)},
            {"source", s.gpu_mem_source},
            {"processes", procs}}},
          {"host_memory",
           {{"total_bytes", opt_json(s.host_total_bytes)},
            {"peak_used_bytes", opt_json(s.peak_host_used_bytes)},
            {"min_available_bytes", opt_json(s.min_available_bytes)},
            {"peak_page_cache_bytes", opt_json(s.peak_page_cache_bytes)},
            {"peak_swap_used_bytes", opt_json(s.peak_swap_used_bytes)},
            {"max_psi_some_avg10", opt_json(s.max_psi_some_avg10)},
            {"max_psi_full_avg10", opt_json(s.max_psi_full_avg10)}}},
          {"gpus", gpus},
          {"power_capped_s", opt_json(s.power_capped_s)},
          {"slowed_s", opt_json(s.slowed_s)},
          {"events", events},
          {"events_by_kind", s.events_by_kind},
          {"warn_events", s.warn_events},
          {"cache_drops", s.cache_drops},
          {"cache_drop_failures", s.cache_drop_failures},
          {"load_window_end", s.load_window_end ? json(*s.load_window_end) : json()},
          {"end", end},
          {"notes", s.notes}};
}

}  // namespace sparkdoc::report
