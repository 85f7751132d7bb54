#include "report/exposition.h"

#include <fmt/format.h>

#include <functional>
#include <vector>

namespace sparkdoc::report {
namespace {

using runlog::ClockCounters;
using runlog::GpuSample;
using runlog::LogHeader;
using runlog::Sample;

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ",";
    out += labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return out + "}";
}

// One metric family: HELP and TYPE once, then its series; nothing when it has no series.
class Family {
 public:
  Family(std::string_view name, std::string_view type, std::string_view help)
      : name_(name), type_(type), help_(help) {}
  void add(const Labels& labels, const std::string& value) {
    series_ += name_ + render_labels(labels) + " " + value + "\n";
  }
  void write_to(std::string& out) const {
    if (series_.empty()) return;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, help_, name_, type_);
    out += series_;
  }

 private:
  std::string name_;
  std::string type_;
  std::string help_;
  std::string series_;
};

template <class T>
std::optional<std::string> text(const std::optional<T>& value) {
  if (!value) return std::nullopt;
  return fmt::format("{}", *value);
}

struct GpuMetric {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::function<std::optional<std::string>(const GpuSample&)> value;
};

std::optional<std::string> mib(const std::optional<uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return fmt::format("{}", *bytes / (1024 * 1024));
}

std::optional<std::string> seconds_from_ns(const std::optional<uint64_t>& ns) {
  if (!ns) return std::nullopt;
  return fmt::format("{}", static_cast<double>(*ns) / 1e9);
}

const std::vector<GpuMetric>& gpu_metrics() {
  static const std::vector<GpuMetric> metrics = {
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
       [](const GpuSample& g) { return text(g.temp_c); }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
       [](const GpuSample& g) { return text(g.power_w); }},
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
       [](const GpuSample& g) { return text(g.sm_clock_mhz); }},
      {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
       [](const GpuSample& g) { return text(g.mem_clock_mhz); }},
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
       [](const GpuSample& g) { return text(g.util_pct); }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuSample& g) { return mib(g.mem_used_bytes); }},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge",
       "Current clock event reasons (bit mask of nvmlClocksEventReason*).",
       [](const GpuSample& g) { return text(g.clock_event_reasons); }},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
       "Total energy consumption since the driver was loaded (in mJ).",
       [](const GpuSample& g) { return text(g.energy_mj); }},
      {"DCGM_FI_DEV_POWER_VIOLATION", "counter",
       "Throttling duration due to power constraints (in ns).",
       [](const GpuSample& g) { return text(g.counters.power); }},
      {"DCGM_FI_DEV_THERMAL_VIOLATION", "counter",
       "Throttling duration due to thermal constraints (in ns).",
       [](const GpuSample& g) { return text(g.counters.thermal); }},
      {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter",
       "Throttling duration due to sync-boost constraints (in ns).",
       [](const GpuSample& g) { return text(g.counters.sync_boost); }},
      {"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter",
       "Throttling duration due to board limit constraints (in ns).",
       [](const GpuSample& g) { return text(g.counters.board_limit); }},
      {"DCGM_FI_DEV_LOW_UTIL_VIOLATION", "counter",
       "Throttling duration due to low utilization (in ns).",
       [](const GpuSample& g) { return text(g.counters.low_util); }},
      {"DCGM_FI_DEV_RELIABILITY_VIOLATION", "counter",
       "Throttling duration due to reliability constraints (in ns).",
       [](const GpuSample& g) { return text(g.counters.reliability); }},
      {"DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION", "counter",
       "Total throttling duration below application clocks (in ns).",
       [](const GpuSample& g) { return text(g.counters.total_app_clocks); }},
      {"DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION", "counter",
       "Total throttling duration below base clocks (in ns).",
       [](const GpuSample& g) { return text(g.counters.total_base_clocks); }},
  };
  return metrics;
}

// The clock-event counters DCGM has no field for (NVML 269-271), by reason.
const std::vector<std::pair<std::string_view, std::optional<uint64_t> ClockCounters::*>>
    kEventCounters = {{"sw_thermal", &ClockCounters::sw_thermal},
                      {"hw_thermal", &ClockCounters::hw_thermal},
                      {"hw_power_brake", &ClockCounters::hw_power_brake}};

Labels gpu_labels(const LogHeader& header, const GpuSample& g) {
  Labels labels = {{"gpu", std::to_string(g.index)}};
  const runlog::GpuInfo* info = nullptr;
  for (const runlog::GpuInfo& candidate : header.gpus) {
    if (candidate.index == g.index) info = &candidate;
  }
  if (info != nullptr && info->uuid) labels.emplace_back("UUID", *info->uuid);
  if (info != nullptr && info->pci_bus_id) labels.emplace_back("pci_bus_id", *info->pci_bus_id);
  labels.emplace_back("device", "nvidia" + std::to_string(g.index));
  if (info != nullptr && info->name) labels.emplace_back("modelName", *info->name);
  if (!header.host.empty()) labels.emplace_back("Hostname", header.host);
  if (header.driver_version) labels.emplace_back("DCGM_FI_DRIVER_VERSION", *header.driver_version);
  return labels;
}

void gpu_families(const LogHeader& header, const Sample& s, std::string& out) {
  for (const GpuMetric& metric : gpu_metrics()) {
    Family family(metric.name, metric.type, metric.help);
    for (const GpuSample& g : s.gpus) {
      if (auto value = metric.value(g)) family.add(gpu_labels(header, g), *value);
    }
    family.write_to(out);
  }
  Family events("sparkdoc_gpu_clock_event_seconds_total", "counter",
                "Time the clocks were held down, by clock-event reason without a DCGM field.");
  Family processes("sparkdoc_gpu_process_memory_bytes", "gauge",
                   "GPU memory each process uses, as NVML lists it (works on GB10).");
  Family process_sum("sparkdoc_gpu_processes_memory_bytes", "gauge",
                     "Sum of the GPU memory NVML lists per process.");
  for (const GpuSample& g : s.gpus) {
    Labels labels = gpu_labels(header, g);
    for (const auto& [reason, field] : kEventCounters) {
      Labels with_reason = labels;
      with_reason.emplace_back("reason", std::string(reason));
      if (auto value = seconds_from_ns(g.counters.*field)) events.add(with_reason, *value);
    }
    if (!g.processes) continue;
    uint64_t sum = 0;
    for (const runlog::GpuProcessUse& p : *g.processes) {
      if (!p.used_bytes) continue;
      sum += *p.used_bytes;
      Labels with_process = labels;
      with_process.emplace_back("pid", std::to_string(p.pid));
      if (p.name) with_process.emplace_back("name", *p.name);
      processes.add(with_process, std::to_string(*p.used_bytes));
    }
    process_sum.add(labels, std::to_string(sum));
  }
  events.write_to(out);
  processes.write_to(out);
  process_sum.write_to(out);
}

void memory_families(const runlog::HostMemorySample& m, std::string& out) {
  struct HostMetric {
    std::string_view name;
    std::string_view help;
    std::optional<std::string> value;
  };
  const HostMetric metrics[] = {
      {"sparkdoc_memory_total_bytes", "MemTotal: on unified memory, the GPU's memory too.",
       text(m.total_bytes)},
      {"sparkdoc_memory_available_bytes",
       "MemAvailable: the headroom NVIDIA's rule for unified memory starts from.",
       text(m.available_bytes)},
      {"sparkdoc_memory_page_cache_bytes", "Cached: the page cache (shmem included).",
       text(m.cached_bytes)},
      {"sparkdoc_memory_buffers_bytes", "Buffers.", text(m.buffers_bytes)},
      {"sparkdoc_memory_shmem_bytes", "Shmem: page cache that dropping caches cannot free.",
       text(m.shmem_bytes)},
      {"sparkdoc_memory_anon_bytes", "AnonPages: process memory.", text(m.anon_bytes)},
      {"sparkdoc_swap_total_bytes", "SwapTotal.", text(m.swap_total_bytes)},
      {"sparkdoc_swap_used_bytes", "SwapTotal - SwapFree.", text(m.swap_used_bytes)},
      {"sparkdoc_memory_psi_some_avg10_percent",
       "Share of the last 10 s some task stalled on memory (PSI).", text(m.psi_some_avg10)},
      {"sparkdoc_memory_psi_full_avg10_percent",
       "Share of the last 10 s all tasks stalled on memory (PSI).", text(m.psi_full_avg10)},
  };
  for (const HostMetric& metric : metrics) {
    Family family(metric.name, "gauge", metric.help);
    if (metric.value) family.add({}, *metric.value);
    family.write_to(out);
  }
}

}  // namespace

Sample with_latest_counters(Sample sample, const std::optional<Sample>& before) {
  if (!before) return sample;
  for (GpuSample& g : sample.gpus) {
    for (const GpuSample& old : before->gpus) {
      if (old.index != g.index) continue;
      if (g.counters.empty()) g.counters = old.counters;
      if (!g.energy_mj) g.energy_mj = old.energy_mj;
    }
  }
  return sample;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_exposition(const LogHeader& header, const std::optional<Sample>& latest,
                              const EventCounts& events, uint64_t samples_total) {
  std::string out;
  Family info("sparkdoc_watch_info", "gauge", "The watching sparkdoc and the machine it judged.");
  info.add({{"version", header.sparkdoc_version},
            {"platform", header.platform},
            {"Hostname", header.host}},
           "1");
  info.write_to(out);
  Family samples("sparkdoc_watch_samples_total", "counter", "Samples taken.");
  samples.add({}, std::to_string(samples_total));
  samples.write_to(out);
  if (latest) {
    Family last("sparkdoc_watch_last_sample_timestamp_seconds", "gauge",
                "Unix time of the latest sample.");
    last.add({}, fmt::format("{:.3f}", latest->ts));
    last.write_to(out);
    gpu_families(header, *latest, out);
    memory_families(latest->mem, out);
  }
  Family counts("sparkdoc_events_total", "counter",
                "Events the detectors raised, by kind and severity.");
  for (std::string_view kind : runlog::kEventKinds) {
    for (runlog::EventSeverity severity :
         {runlog::EventSeverity::kInfo, runlog::EventSeverity::kWarn}) {
      auto it = events.find({std::string(kind), severity});
      uint64_t n = it == events.end() ? 0 : it->second;
      counts.add(
          {{"kind", std::string(kind)}, {"severity", std::string(runlog::severity_name(severity))}},
          std::to_string(n));
    }
  }
  counts.write_to(out);
  return out;
}

}  // namespace sparkdoc::report
