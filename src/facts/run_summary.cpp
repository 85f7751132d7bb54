#include "facts/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/time.h"
#include "facts/memory.h"
#include "facts/throttle.h"

namespace sparkdoc::facts {
namespace {

using runlog::GpuSample;
using runlog::RunLog;
using runlog::Sample;

template <class T>
void keep_max(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate > *current)) current = candidate;
}
template <class T>
void keep_min(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate < *current)) current = candidate;
}

template <class T>
std::optional<double> as_double(const std::optional<T>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
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

// The largest increase among the counters of one kind between two readings, at most
// `interval_ns`.
std::optional<double> counter_step(const GpuSample& prev, const GpuSample& cur, Throttle kind,
                                   double interval_ns) {
  std::optional<double> best;
  for (const runlog::ClockCounterField& field : runlog::kClockCounterFields) {
    if (counter_throttle(field.key) != kind) continue;
    const std::optional<uint64_t>& now = cur.counters.*field.member;
    const std::optional<uint64_t>& before = prev.counters.*field.member;
    if (!now || !before) continue;
    double step = *now >= *before ? static_cast<double>(*now - *before) : 0.0;
    keep_max(best, std::optional<double>(std::min(step, interval_ns)));
  }
  return best;
}

void summarize_gpus(const RunLog& log, RunSummary& out) {
  std::map<unsigned, GpuSummary> by_index;
  if (log.header) {
    for (const auto& info : log.header->gpus) {
      GpuSummary g;
      g.index = info.index;
      g.name = info.name.value_or("");
      g.power_limit_w = info.power_limit_w;
      by_index.emplace(info.index, g);
    }
  }
  std::map<unsigned, const GpuSample*> previous;
  std::map<unsigned, double> previous_ts;
  std::map<unsigned, const GpuSample*> counted_before;  // the latest sample with counters
  std::map<unsigned, double> counted_ts;
  std::map<unsigned, double> counter_power;
  std::map<unsigned, double> counter_slowed;
  std::map<unsigned, double> reason_power;
  std::map<unsigned, double> reason_slowed;
  std::map<unsigned, bool> any_counter;
  std::map<unsigned, bool> any_reason;
  for (const auto& s : log.samples) {
    for (const auto& g : s.gpus) {
      auto [it, added] = by_index.try_emplace(g.index);
      GpuSummary& sum = it->second;
      if (added) sum.index = g.index;
      keep_max(sum.max_power_w, g.power_w);
      keep_max(sum.max_temp_c, as_double(g.temp_c));
      if (!sum.first_temp_c) sum.first_temp_c = as_double(g.temp_c);
      keep_min(sum.min_sm_clock_mhz, as_double(g.sm_clock_mhz));
      keep_max(sum.max_sm_clock_mhz, as_double(g.sm_clock_mhz));
      // The counters are read every few seconds: each step runs from the previous sample that
      // carried them.
      auto counted = counted_before.find(g.index);
      if (!g.counters.empty() && counted != counted_before.end()) {
        double interval = s.ts - counted_ts[g.index];
        if (interval > 0) {
          double interval_ns = interval * 1e9;
          auto power = counter_step(*counted->second, g, Throttle::kPowerCap, interval_ns);
          auto slowed = counter_step(*counted->second, g, Throttle::kSlowdown, interval_ns);
          if (power || slowed) any_counter[g.index] = true;
          counter_power[g.index] += power.value_or(0) / 1e9;
          counter_slowed[g.index] += slowed.value_or(0) / 1e9;
        }
      }
      if (!g.counters.empty()) {
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
            if (bits & kPowerCapReasons) reason_power[g.index] += interval;
            if (bits & kSlowdownReasons) reason_slowed[g.index] += interval;
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

void summarize_memory(const RunLog& log, RunSummary& out) {
  std::map<std::pair<uint32_t, std::string>, uint64_t> process_peaks;
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
        uint64_t& peak = process_peaks[{p.pid, p.name.value_or("")}];
        peak = std::max(peak, *p.used_bytes);
      }
    }
    const runlog::HostMemorySample& m = s.mem;
    keep_max(out.host_total_bytes, m.total_bytes);
    if (m.total_bytes && m.available_bytes && *m.total_bytes >= *m.available_bytes) {
      keep_max(out.peak_host_used_bytes,
               std::optional<uint64_t>(*m.total_bytes - *m.available_bytes));
    }
    keep_min(out.min_available_bytes, m.available_bytes);
    keep_max(out.peak_page_cache_bytes,
             page_cache_bytes(m.cached_bytes, m.buffers_bytes, m.shmem_bytes));
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

}  // namespace

std::optional<uint64_t> sample_gpu_memory(const Sample& sample) {
  auto m = gpu_memory_of(sample);
  if (!m) return std::nullopt;
  return m->first;
}

RunSummary summarize_run(const RunLog& log) {
  RunSummary out;
  out.samples = log.samples.size();
  if (log.header) {
    out.host = log.header->host;
    out.platform = log.header->platform;
    if (log.header->started_ts) {
      out.started = format_iso8601_utc(*log.header->started_ts, TimePrecision::kMillis);
    }
    out.interval_s = log.header->interval_s;
  }
  out.start = log.run_start;
  out.end = log.run_end;
  if (log.run_start) {
    if (out.host.empty()) out.host = log.run_start->host;
    out.started = format_iso8601_utc(log.run_start->ts);
    out.argv = log.run_start->argv;
    out.origin_ts = log.run_start->ts;
  } else if (!log.samples.empty()) {
    out.origin_ts = log.samples.front().ts;
  } else if (log.header) {
    out.origin_ts = log.header->started_ts.value_or(0);
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
    if (e.severity == runlog::EventSeverity::kWarn) ++out.warn_events;
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
    out.notes.push_back(
        fmt::format("{} more damaged lines skipped", log.problems.size() - kProblemsShown));
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

}  // namespace sparkdoc::facts
