#include "runreport/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "watch/throttle.h"

namespace sparkdoc::runreport {
namespace {

using nlohmann::json;

// The counters and reason bits that mean power capping or a slowdown, as the detectors group
// them (watch/throttle.h).
bool is_power_counter(const std::string& key) {
  return watch::counter_throttle(key) == watch::Throttle::kPowerCap;
}
bool is_slowdown_counter(const std::string& key) {
  return watch::counter_throttle(key) == watch::Throttle::kSlowdown;
}

template <class T>
void keep_max(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate > *current)) current = candidate;
}
template <class T>
void keep_min(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate < *current)) current = candidate;
}

// GPU memory of one sample and where it came from.
std::optional<std::pair<uint64_t, std::string>> gpu_memory_of(const Sample& s) {
  uint64_t device = 0;
  bool any_device = false;
  uint64_t processes = 0;
  bool any_process = false;
  for (const auto& g : s.gpus) {
    if (g.mem_used_bytes) {
      device += *g.mem_used_bytes;
      any_device = true;
    }
    if (g.processes) {
      for (const auto& p : *g.processes) {
        if (p.used_bytes) {
          processes += *p.used_bytes;
          any_process = true;
        }
      }
    }
  }
  if (any_device) return std::make_pair(device, std::string("device"));
  if (any_process) return std::make_pair(processes, std::string("processes"));
  return std::nullopt;
}

// The largest increase among the chosen counters between two readings, at most `interval_ns`.
std::optional<double> counter_step(const GpuSample& prev, const GpuSample& cur,
                                   bool (*chosen)(const std::string&), double interval_ns) {
  std::optional<double> best;
  for (const auto& [key, now] : cur.clock_event_counters_ns) {
    if (!chosen(key)) continue;
    auto it = prev.clock_event_counters_ns.find(key);
    if (it == prev.clock_event_counters_ns.end()) continue;
    double step = now >= it->second ? static_cast<double>(now - it->second) : 0.0;
    keep_max(best, std::optional<double>(std::min(step, interval_ns)));
  }
  return best;
}

void summarize_gpus(const RunLog& log, Summary& out) {
  std::map<int, GpuSummary> by_index;
  if (log.header) {
    for (const auto& info : log.header->gpus) {
      GpuSummary g;
      g.index = info.index;
      g.name = info.name;
      g.power_limit_w = info.power_limit_w;
      by_index.emplace(info.index, g);
    }
  }
  std::map<int, const GpuSample*> previous;
  std::map<int, double> previous_ts;
  std::map<int, const GpuSample*> counted_before;  // the latest sample with counters
  std::map<int, double> counted_ts;
  std::map<int, double> counter_power;
  std::map<int, double> counter_slowed;
  std::map<int, double> reason_power;
  std::map<int, double> reason_slowed;
  std::map<int, bool> any_counter;
  std::map<int, bool> any_reason;
  for (const auto& s : log.samples) {
    for (const auto& g : s.gpus) {
      auto [it, added] = by_index.try_emplace(g.index);
      GpuSummary& sum = it->second;
      if (added) sum.index = g.index;
      keep_max(sum.max_power_w, g.power_w);
      keep_max(sum.max_temp_c, g.temp_c);
      if (!sum.first_temp_c) sum.first_temp_c = g.temp_c;
      keep_min(sum.min_sm_clock_mhz, g.sm_clock_mhz);
      keep_max(sum.max_sm_clock_mhz, g.sm_clock_mhz);
      // The counters are read every few seconds: each step runs from the previous sample that
      // carried them.
      auto counted = counted_before.find(g.index);
      if (!g.clock_event_counters_ns.empty() && counted != counted_before.end()) {
        double interval = s.ts - counted_ts[g.index];
        if (interval > 0) {
          double interval_ns = interval * 1e9;
          auto power = counter_step(*counted->second, g, is_power_counter, interval_ns);
          auto slowed = counter_step(*counted->second, g, is_slowdown_counter, interval_ns);
          if (power || slowed) any_counter[g.index] = true;
          counter_power[g.index] += power.value_or(0) / 1e9;
          counter_slowed[g.index] += slowed.value_or(0) / 1e9;
        }
      }
      if (!g.clock_event_counters_ns.empty()) {
        counted_before[g.index] = &g;
        counted_ts[g.index] = s.ts;
      }
      auto prev = previous.find(g.index);
      if (prev != previous.end()) {
        double interval = s.ts - previous_ts[g.index];
        if (interval > 0) {
          if (prev->second->clock_event_reasons) {
            any_reason[g.index] = true;
            uint64_t bits = *prev->second->clock_event_reasons;
            if (bits & watch::kPowerCapReasons) reason_power[g.index] += interval;
            if (bits & watch::kSlowdownReasons) reason_slowed[g.index] += interval;
          }
        }
      }
      previous[g.index] = &g;
      previous_ts[g.index] = s.ts;
    }
  }
  for (auto& [index, g] : by_index) {
    if (any_counter[index]) {
      g.power_capped_s = counter_power[index];
      g.slowed_s = counter_slowed[index];
      g.throttle_source = "clock-event counters";
    } else if (any_reason[index]) {
      g.power_capped_s = reason_power[index];
      g.slowed_s = reason_slowed[index];
      g.throttle_source = "clock-event reasons";
    }
    keep_max(out.power_capped_s, g.power_capped_s);
    keep_max(out.slowed_s, g.slowed_s);
    out.gpus.push_back(g);
  }
}

void summarize_memory(const RunLog& log, Summary& out) {
  std::map<std::pair<int64_t, std::string>, uint64_t> process_peaks;
  for (const auto& s : log.samples) {
    if (auto m = gpu_memory_of(s);
        m && (!out.peak_gpu_mem_bytes || m->first > *out.peak_gpu_mem_bytes)) {
      out.peak_gpu_mem_bytes = m->first;
      out.peak_gpu_mem_at_s = s.ts - out.origin_ts;
      out.gpu_mem_source = m->second;
    }
    for (const auto& g : s.gpus) {
      if (!g.processes) continue;
      for (const auto& p : *g.processes) {
        if (!p.used_bytes) continue;
        uint64_t& peak = process_peaks[{p.pid, p.name}];
        peak = std::max(peak, *p.used_bytes);
      }
    }
    const MemSample& m = s.mem;
    keep_max(out.host_total_bytes, m.total_bytes);
    if (m.total_bytes && m.available_bytes && *m.total_bytes >= *m.available_bytes) {
      keep_max(out.peak_host_used_bytes,
               std::optional<uint64_t>(*m.total_bytes - *m.available_bytes));
    }
    keep_min(out.min_available_bytes, m.available_bytes);
    keep_max(out.peak_page_cache_bytes, m.cached_bytes);
    keep_max(out.peak_swap_used_bytes, m.swap_used_bytes);
    keep_max(out.max_psi_some_avg10, m.psi_some_avg10);
    keep_max(out.max_psi_full_avg10, m.psi_full_avg10);
  }
  for (const auto& [key, peak] : process_peaks) {
    out.process_peaks.push_back(ProcessPeak{key.first, key.second, peak});
  }
  std::stable_sort(
      out.process_peaks.begin(), out.process_peaks.end(),
      [](const ProcessPeak& a, const ProcessPeak& b) { return a.peak_bytes > b.peak_bytes; });
  if (out.process_peaks.size() > kMaxProcessPeaks) out.process_peaks.resize(kMaxProcessPeaks);
}

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

std::optional<uint64_t> sample_gpu_memory(const Sample& sample) {
  auto m = gpu_memory_of(sample);
  if (!m) return std::nullopt;
  return m->first;
}

Summary summarize(const RunLog& log) {
  Summary out;
  out.samples = log.samples.size();
  if (log.header) {
    out.host = log.header->host;
    out.platform = log.header->platform;
    out.started = log.header->started;
    out.interval_s = log.header->interval_s;
  }
  out.start = log.run_start;
  out.end = log.run_end;
  if (log.run_start) {
    if (out.host.empty()) out.host = log.run_start->host;
    out.started = log.run_start->t;
    out.argv = log.run_start->argv;
    out.origin_ts = log.run_start->ts;
  } else if (!log.samples.empty()) {
    out.origin_ts = log.samples.front().ts;
  } else if (log.header) {
    out.origin_ts = parse_iso8601_utc(log.header->started).value_or(0);
  }
  if (log.run_end) {
    out.duration_s = log.run_end->duration_s;
  } else if (log.samples.size() >= 2) {
    out.duration_s = log.samples.back().ts - out.origin_ts;
  }
  summarize_gpus(log, out);
  summarize_memory(log, out);
  for (const auto& e : log.events) {
    ++out.events_by_kind[e.kind.empty() ? std::string("unknown") : e.kind];
    if (e.severity == "warn") ++out.warn_events;
  }
  out.events = log.events;
  out.cache_drops = log.cache_drops.size();
  for (const auto& d : log.cache_drops) out.cache_drop_failures += d.ok ? 0 : 1;
  if (log.load_window_end) out.load_window_end = log.load_window_end->reason;

  if (log.truncated_bytes > 0) {
    out.notes.push_back(fmt::format(
        "the log ends in an unfinished line ({} bytes ignored): its writer was killed mid-line",
        log.truncated_bytes));
  }
  // A badly damaged log can have a problem on every line: the first few say what kind.
  constexpr size_t kProblemsShown = 10;
  for (size_t i = 0; i < log.problems.size() && i < kProblemsShown; ++i) {
    out.notes.push_back(log.problems[i]);
  }
  if (log.problems.size() > kProblemsShown) {
    out.notes.push_back(fmt::format("{} more damaged lines skipped",
                                    log.problems.size() - kProblemsShown));
  }
  if (log.samples.empty()) {
    std::string why = log.run_start ? log.run_start->telemetry : std::string();
    if (why.starts_with("none: ")) why = why.substr(6);
    out.notes.push_back(why.empty() ? std::string("no telemetry samples in the log")
                                    : "no telemetry samples: " + why);
  }
  if (log.run_start && !log.run_end) {
    out.notes.push_back("no run_end line: sparkdoc run did not finish (killed, or still running)");
  }
  return out;
}

std::string render_summary_text(const Summary& s, size_t events_shown) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& text) {
    out += fmt::format("  {:<12} {}\n", label, text);
  };
  std::vector<std::string> words;
  for (const auto& a : s.argv) words.push_back(shell_word(a));
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
      out += fmt::format("    {:>8} {:<4} {}: {}\n", format_elapsed(e.ts - s.origin_ts), e.severity,
                         e.kind, e.message);
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

json render_summary_json(const Summary& s) {
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
    events.push_back({{"t", e.t},
                      {"elapsed_s", e.ts - s.origin_ts},
                      {"kind", e.kind},
                      {"severity", e.severity},
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

}  // namespace sparkdoc::runreport
