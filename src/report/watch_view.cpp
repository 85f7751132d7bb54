#include "report/watch_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "facts/memory.h"
#include "model/clock_events.h"

namespace sparkdoc::report {
namespace {

using runlog::Event;
using runlog::GpuSample;
using runlog::Sample;

constexpr size_t kEventsShown = 3;

std::string or_dash(const std::optional<unsigned>& value) {
  return value ? std::to_string(*value) : std::string("-");
}

std::string gpu_figures(const GpuSample& g) {
  return fmt::format("{} W  {} C  SM {} MHz  util {}%",
                     g.power_w ? fmt::format("{:.1f}", *g.power_w) : std::string("-"),
                     or_dash(g.temp_c), or_dash(g.sm_clock_mhz), or_dash(g.util_pct));
}

std::string memory_figures(const runlog::HostMemorySample& m) {
  std::string out;
  if (m.available_bytes && m.total_bytes) {
    out = fmt::format("avail {} of {}", format_gb(*m.available_bytes), format_gb(*m.total_bytes));
  } else {
    out = "memory not read";
  }
  // The page cache as the detectors and the run summary count it, so the figure on screen is
  // the one page_cache_growth judges.
  if (auto cache = facts::page_cache_bytes(m.cached_bytes, m.buffers_bytes, m.shmem_bytes)) {
    out += "  cache " + format_gb(*cache);
  }
  if (m.swap_used_bytes && *m.swap_used_bytes > 0) out += "  swap " + format_gb(*m.swap_used_bytes);
  if (m.psi_some_avg10) out += fmt::format("  PSI some {:.1f}%", *m.psi_some_avg10);
  if (m.psi_full_avg10) out += fmt::format(" full {:.1f}%", *m.psi_full_avg10);
  return out;
}

std::string cut(std::string line, size_t width) {
  if (width > 0 && line.size() > width) {
    line.resize(width > 3 ? width - 3 : width);
    if (width > 3) line += "...";
  }
  return line;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<std::string> render_block(const runlog::LogHeader& header, const Sample& sample,
                                      const std::vector<Event>& recent, const ViewContext& context,
                                      size_t width) {
  std::vector<std::string> lines;
  std::string title =
      fmt::format("sparkdoc watch  {}  every {:g} s  {} samples", local_clock(sample.ts),
                  header.interval_s.value_or(0), context.samples);
  if (!context.log_path.empty()) title += "  log " + context.log_path;
  if (!context.metrics_url.empty()) title += "  metrics " + context.metrics_url;
  lines.push_back(title);
  for (const GpuSample& g : sample.gpus) {
    std::string name;
    for (const runlog::GpuInfo& info : header.gpus) {
      if (info.index == g.index && info.name) name = *info.name;
    }
    std::string reasons =
        g.clock_event_reasons
            ? "reasons: " + gpu::describe_clock_event_reasons(*g.clock_event_reasons)
            : std::string();
    lines.push_back(fmt::format("GPU {} {}  {}  {}", g.index, name, gpu_figures(g), reasons));
    if (g.processes && !g.processes->empty()) {
      std::vector<std::string> processes;
      for (const runlog::GpuProcessUse& p : *g.processes) {
        processes.push_back(fmt::format("{} {} {}", p.pid, p.name.value_or("?"),
                                        p.used_bytes ? format_gb(*p.used_bytes) : "-"));
      }
      lines.push_back("  processes: " + join(processes, ", "));
    }
  }
  lines.push_back(memory_figures(sample.mem));
  size_t first = recent.size() > kEventsShown ? recent.size() - kEventsShown : 0;
  for (size_t i = first; i < recent.size(); ++i) lines.push_back(render_event_line(recent[i]));
  for (std::string& line : lines) line = cut(std::move(line), width);
  return lines;
}

std::string render_line(const Sample& sample) {
  std::vector<std::string> parts;
  for (const GpuSample& g : sample.gpus) {
    parts.push_back(fmt::format("GPU{} {}", g.index, gpu_figures(g)));
  }
  parts.push_back(memory_figures(sample.mem));
  return local_clock(sample.ts) + " " + join(parts, " | ");
}

std::string render_event_line(const Event& event) {
  return fmt::format("{} {} {}: {}", local_clock(event.ts),
                     upper(runlog::severity_name(event.severity)), event.kind, event.message);
}

}  // namespace sparkdoc::report
