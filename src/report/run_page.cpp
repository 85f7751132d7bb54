#include "report/run_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "report/picture.h"
#include "report/run_summary.h"

namespace sparkdoc::report {
namespace {

using runlog::GpuSample;
using runlog::HostMemorySample;
using runlog::RunLog;

// Chart geometry, in SVG user units.
constexpr double kWidth = 960;
constexpr double kHeight = 250;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 34;
constexpr double kBottom = 30;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kPlotH = kHeight - kTop - kBottom;
constexpr size_t kMaxSeriesPerChart = 8;
// 002 G4: "sustained power draw caps around 100W versus the 240W rated figure".
constexpr double kGb10SustainedCapW = 100;

struct Point {
  double x = 0;  // elapsed seconds
  std::optional<double> y;
};

struct Series {
  std::string label;
  std::string color;
  bool dashed = false;
  std::vector<Point> points;
  bool any() const {
    return std::any_of(points.begin(), points.end(),
                       [](const Point& p) { return p.y.has_value(); });
  }
};

struct Marker {
  double x = 0;
  std::string css;  // "warn", "info", "drop"
  std::string title;
  std::string label;  // the event's number in the events table; "" for a cache drop
};

struct Chart {
  std::string id;
  std::string title;
  std::string unit;
  bool from_zero = true;
  std::vector<Series> series;
  std::optional<std::pair<double, std::string>> reference;  // value, label
  std::vector<Marker> extra_markers;
  std::string note;  // shown under the title
};

std::string num(double v) {
  // One decimal, and never "-0.0".
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

double nice_step(double range, int target) {
  if (!(range > 0) || !std::isfinite(range)) return 1;
  double raw = range / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  return step > 0 && std::isfinite(step) ? step : 1;
}

std::string tick_label(double v, double step) {
  if (step >= 1) return fmt::format("{:.0f}", v);
  if (step >= 0.1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

double time_step(double range) {
  constexpr std::array<double, 20> kSteps{1,     2,     5,     10,    15,     30,    60,
                                          120,   300,   600,   900,   1800,   3600,  7200,
                                          10800, 21600, 43200, 86400, 172800, 604800};
  for (double s : kSteps) {
    if (range / s <= 8) return s;
  }
  // Past a week: whole weeks, at most about eight ticks.
  return std::ceil(range / 8 / kSteps.back()) * kSteps.back();
}

// Keeps at most two points per pixel column (the lowest and the highest, in time order), and
// one missing point for a column with no value, so peaks and gaps both survive.
// The elapsed-time span of the charts: from the start of the run (or an earlier sample) to the
// last reading.
struct XRange {
  double lo = 0;
  double hi = 1;
  double column(double x) const { return std::floor((x - lo) / (hi - lo) * kPlotW); }
};

// Values past this are not readings (a corrupt log); they are left out like missing ones.
constexpr double kPlottableLimit = 1e15;

std::vector<Point> thin(const std::vector<Point>& points, const XRange& xr) {
  if (points.size() <= static_cast<size_t>(2 * kPlotW)) return points;
  std::vector<Point> out;
  size_t i = 0;
  while (i < points.size()) {
    double column = xr.column(points[i].x);
    size_t j = i;
    std::optional<size_t> lo;
    std::optional<size_t> hi;
    while (j < points.size() && xr.column(points[j].x) == column) {
      if (points[j].y) {
        if (!lo || *points[j].y < *points[*lo].y) lo = j;
        if (!hi || *points[j].y > *points[*hi].y) hi = j;
      }
      ++j;
    }
    if (!lo) {
      out.push_back(Point{points[i].x, std::nullopt});
    } else if (*lo == *hi) {
      out.push_back(points[*lo]);
    } else {
      out.push_back(points[std::min(*lo, *hi)]);
      out.push_back(points[std::max(*lo, *hi)]);
    }
    i = j;
  }
  return out;
}

std::string render_chart(const Chart& input, const std::vector<Marker>& events, const XRange& xr) {
  Chart chart = input;
  for (auto& s : chart.series) {
    for (auto& p : s.points) {
      if (p.y && !(std::fabs(*p.y) <= kPlottableLimit)) p.y.reset();
    }
  }
  std::string out;
  out += fmt::format("<section class=\"chart\" id=\"{}\">\n<h2>{}</h2>\n", chart.id,
                     html_escape(chart.title));
  if (!chart.note.empty())
    out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(chart.note));
  std::optional<double> lo;
  std::optional<double> hi;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) {
      if (!p.y) continue;
      lo = lo ? std::min(*lo, *p.y) : *p.y;
      hi = hi ? std::max(*hi, *p.y) : *p.y;
    }
  }
  if (!lo) {
    out += "<p class=\"empty\">No readings of this in the log.</p>\n</section>\n";
    return out;
  }
  if (chart.reference) {
    lo = std::min(*lo, chart.reference->first);
    hi = std::max(*hi, chart.reference->first);
  }
  double y_lo = chart.from_zero ? std::min(0.0, *lo) : *lo;
  double step = nice_step(*hi - y_lo, 5);
  y_lo = std::floor(y_lo / step) * step;
  double y_hi = std::ceil(*hi / step) * step;
  if (y_hi <= y_lo) y_hi = y_lo + step;
  if (*hi >= y_hi) y_hi += step;

  double tick_count = (y_hi - y_lo) / step;
  auto y_ticks = std::isfinite(tick_count) && tick_count < 1000
                     ? static_cast<long>(std::llround(tick_count))
                     : 0L;
  if (y_ticks < 1 || y_ticks > 100) {
    out +=
        "<p class=\"empty\">The readings of this cannot be drawn (out of range).</p>\n"
        "</section>\n";
    return out;
  }
  auto px = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * kPlotW; };
  auto py = [&](double y) { return kTop + kPlotH - (y - y_lo) / (y_hi - y_lo) * kPlotH; };

  out += fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n",
      num(kWidth), num(kHeight), html_escape(chart.title));
  out += fmt::format("<rect class=\"plot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                     num(kLeft), num(kTop), num(kPlotW), num(kPlotH));
  // Horizontal grid and y labels.
  for (long i = 0; i <= y_ticks; ++i) {
    double v = y_lo + static_cast<double>(i) * step;
    double y = py(v);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                       num(kLeft), num(y), num(kLeft + kPlotW), num(y));
    out += fmt::format("<text class=\"ylab\" x=\"{}\" y=\"{}\">{}</text>\n", num(kLeft - 6),
                       num(y + 4), tick_label(v, step));
  }
  out += fmt::format("<text class=\"unit\" x=\"{}\" y=\"{}\">{}</text>\n", num(kLeft - 6),
                     num(kTop - 10), html_escape(chart.unit));
  // Vertical grid and elapsed-time labels.
  double t_step = time_step(xr.hi - xr.lo);
  auto first_tick = static_cast<long>(std::ceil(xr.lo / t_step - 1e-9));
  auto last_tick = static_cast<long>(std::floor(xr.hi / t_step + 1e-9));
  for (long i = first_tick; i <= last_tick; ++i) {
    double t = static_cast<double>(i) * t_step;
    double x = px(t);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", num(x),
                       num(kTop), num(x), num(kTop + kPlotH));
    out += fmt::format("<text class=\"xlab\" x=\"{}\" y=\"{}\">{}</text>\n", num(x),
                       num(kTop + kPlotH + 18), format_elapsed(t));
  }
  if (chart.reference) {
    double y = py(chart.reference->first);
    out += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                       num(kLeft), num(y), num(kLeft + kPlotW), num(y));
    out += fmt::format("<text class=\"reflab\" x=\"{}\" y=\"{}\">{}</text>\n",
                       num(kLeft + kPlotW - 4), num(y - 4), html_escape(chart.reference->second));
  }
  // Markers under the lines.
  std::vector<Marker> markers = events;
  markers.insert(markers.end(), chart.extra_markers.begin(), chart.extra_markers.end());
  size_t label_row = 0;
  for (const auto& m : markers) {
    if (m.x < xr.lo || m.x > xr.hi) continue;
    double x = px(m.x);
    // The event's number at the top of its line, staggered over three rows so that events
    // close in time stay readable; the events table below has the same numbers.
    std::string label;
    if (!m.label.empty()) {
      double y = kTop + 11 + 12 * static_cast<double>(label_row++ % 3);
      label = fmt::format("<text class=\"evn\" x=\"{}\" y=\"{}\">{}</text>", num(x + 3), num(y),
                          html_escape(m.label));
    }
    out += fmt::format(
        "<g class=\"ev {}\"><title>{}</title><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
        "<line class=\"hit\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>{}</g>\n",
        m.css, html_escape(m.title), num(x), num(kTop), num(x), num(kTop + kPlotH), num(x),
        num(kTop), num(x), num(kTop + kPlotH), label);
  }
  // Lines, broken where a value is missing; a lone value is a dot.
  for (const auto& s : chart.series) {
    std::vector<Point> points = thin(s.points, xr);
    std::string d;
    std::vector<std::pair<double, double>> dots;
    size_t run = 0;
    for (size_t i = 0; i <= points.size(); ++i) {
      bool present = i < points.size() && points[i].y.has_value();
      if (present) {
        d += fmt::format("{}{},{}", run == 0 ? (d.empty() ? "M" : " M") : " L",
                         num(px(points[i].x)), num(py(*points[i].y)));
        ++run;
        continue;
      }
      if (run == 1) dots.emplace_back(px(points[i - 1].x), py(*points[i - 1].y));
      run = 0;
    }
    if (!d.empty()) {
      out += fmt::format("<path class=\"line{}\" stroke=\"{}\" d=\"{}\"><title>{}</title></path>\n",
                         s.dashed ? " dashed" : "", s.color, d, html_escape(s.label));
    }
    for (const auto& [x, y] : dots) {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"/>\n", num(x), num(y),
                         s.color);
    }
  }
  // Legend along the top.
  double lx = kLeft;
  for (const auto& s : chart.series) {
    if (!s.any()) continue;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>", num(lx),
                       num(kTop - 22), s.color);
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>\n", num(lx + 14),
                       num(kTop - 13), html_escape(s.label));
    lx += 14 + 7.0 * static_cast<double>(s.label.size()) + 18;
  }
  out += "</svg>\n</section>\n";
  return out;
}

double gb(uint64_t bytes) {
  return static_cast<double>(bytes) / 1e9;
}

std::optional<double> gb(const std::optional<uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return gb(*bytes);
}

template <class T>
std::optional<double> as_double(const std::optional<T>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

// The GPU indexes of the log, from the header and the samples.
std::vector<unsigned> gpu_indexes(const RunLog& log) {
  std::set<unsigned> seen;
  if (log.header) {
    for (const auto& g : log.header->gpus) seen.insert(g.index);
  }
  for (const auto& s : log.samples) {
    for (const auto& g : s.gpus) seen.insert(g.index);
  }
  return {seen.begin(), seen.end()};
}

const GpuSample* find_gpu(const runlog::Sample& s, unsigned index) {
  for (const auto& g : s.gpus) {
    if (g.index == index) return &g;
  }
  return nullptr;
}

// One series per GPU of a per-GPU value.
std::vector<Series> per_gpu(const RunLog& log, double origin,
                            std::optional<double> (*value)(const GpuSample&)) {
  std::vector<Series> out;
  std::vector<unsigned> indexes = gpu_indexes(log);
  for (size_t i = 0; i < indexes.size(); ++i) {
    Series s;
    s.label = fmt::format("GPU {}", indexes[i]);
    s.color = kPalette[i % kPalette.size()];
    for (const auto& sample : log.samples) {
      const GpuSample* g = find_gpu(sample, indexes[i]);
      s.points.push_back(Point{sample.ts - origin, g ? value(*g) : std::nullopt});
    }
    out.push_back(std::move(s));
  }
  return out;
}

Series host_series(const RunLog& log, double origin, std::string label, const char* color,
                   std::optional<double> (*value)(const HostMemorySample&)) {
  Series s;
  s.label = std::move(label);
  s.color = color;
  for (const auto& sample : log.samples) {
    s.points.push_back(Point{sample.ts - origin, value(sample.mem)});
  }
  return s;
}

Chart process_chart(const RunLog& log, double origin) {
  Chart c;
  c.id = "gpu-memory";
  c.title = "GPU memory per process";
  c.unit = "GB";
  // Processes by (pid, name), largest peak first.
  std::map<std::pair<uint32_t, std::string>, uint64_t> peaks;
  for (const auto& s : log.samples) {
    for (const auto& g : s.gpus) {
      if (!g.processes) continue;
      for (const auto& p : *g.processes) {
        if (p.used_bytes) {
          auto& peak = peaks[{p.pid, p.name.value_or("")}];
          peak = std::max(peak, *p.used_bytes);
        }
      }
    }
  }
  std::vector<std::pair<std::pair<uint32_t, std::string>, uint64_t>> order(peaks.begin(),
                                                                           peaks.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  bool any_device = false;
  for (const auto& s : log.samples) {
    for (const auto& g : s.gpus) any_device = any_device || g.mem_used_bytes.has_value();
  }
  size_t room = any_device ? kMaxSeriesPerChart - 1 : kMaxSeriesPerChart;
  if (order.size() > room) {
    c.note = fmt::format("The {} largest of {} processes.", room, order.size());
    order.resize(room);
  }
  size_t color = 0;
  if (any_device) {
    Series total;
    total.label = "device total";
    total.color = "#555555";
    total.dashed = true;
    for (const auto& s : log.samples) {
      std::optional<uint64_t> sum;
      for (const auto& g : s.gpus) {
        if (g.mem_used_bytes) sum = sum.value_or(0) + *g.mem_used_bytes;
      }
      total.points.push_back(Point{s.ts - origin, gb(sum)});
    }
    c.series.push_back(std::move(total));
  }
  for (const auto& [key, peak] : order) {
    Series ps;
    ps.label = key.second.empty() ? fmt::format("pid {}", key.first)
                                  : fmt::format("{} ({})", key.second, key.first);
    ps.color = kPalette[color++ % kPalette.size()];
    for (const auto& s : log.samples) {
      std::optional<uint64_t> used;
      for (const auto& g : s.gpus) {
        if (!g.processes) continue;
        for (const auto& p : *g.processes) {
          if (p.pid == key.first && p.name.value_or("") == key.second && p.used_bytes) {
            used = used.value_or(0) + *p.used_bytes;
          }
        }
      }
      ps.points.push_back(Point{s.ts - origin, gb(used)});
    }
    c.series.push_back(std::move(ps));
  }
  return c;
}

// `why` is shown under a value that is "?": what the log lacks for it.
std::string tile(std::string_view label, const std::string& value, std::string_view css = "",
                 std::string_view why = "") {
  return fmt::format(
      "<div class=\"tile{}{}\"><div class=\"v\">{}</div><div class=\"k\">{}</div>{}</div>\n",
      css.empty() ? "" : " ", css, html_escape(value), html_escape(label),
      why.empty() ? "" : fmt::format("<div class=\"why\">{}</div>", html_escape(why)));
}

// Why a tile has no value: the log's samples did not read what it needs.
std::string missing(const RunLog& log, std::string_view what) {
  if (log.samples.empty()) return "no telemetry in this log";
  return fmt::format("none of the {} samples read {}", log.samples.size(), what);
}

// A tile with the value, or "?" and why.
std::string tile_or_why(std::string_view label, const std::optional<std::string>& value,
                        const std::string& why, std::string_view css = "") {
  return value ? tile(label, *value, css) : tile(label, "?", "", why);
}

std::string row(std::string_view key, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(key), html_escape(value));
}

std::string shell_words(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& a : argv) {
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}!#~") == std::string::npos;
    words.push_back(plain ? a : "'" + a + "'");
  }
  return join(words, " ");
}

constexpr std::string_view kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:1000px;margin:0 auto;padding:20px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:16px;margin:0 0 6px}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.cmd{margin:0 0 14px;color:#444;word-break:break-all}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:14px 0}
.tile{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:10px 12px}
.tile .v{font-size:20px;font-weight:600}
.tile .k{font-size:12px;color:#5b6475;margin-top:2px}
.tile.warn{border-color:#d62728;background:#fff5f5}
table{border-collapse:collapse;font-size:13px;background:#fff}
table.facts th{text-align:left;padding:3px 12px 3px 0;color:#5b6475;font-weight:500}
table.facts td{padding:3px 0}
table.events{width:100%;border:1px solid #dde1e7}
table.events th,table.events td{padding:4px 8px;border-bottom:1px solid #eef0f3;text-align:left;vertical-align:top}
tr.warn td:nth-child(3){color:#c0392b;font-weight:600}
.chart{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px;margin:14px 0}
svg{width:100%;height:auto;display:block}
svg text{font-size:11px;fill:#5b6475}
svg .ylab,svg .unit{text-anchor:end}
svg .xlab{text-anchor:middle}
svg .reflab{text-anchor:end;fill:#7a4b00}
svg .legend{fill:#1d2330}
svg .plot{fill:#fbfcfd;stroke:#dde1e7}
svg .grid{stroke:#e9ecf0;stroke-width:1}
svg .ref{stroke:#b07000;stroke-width:1.2;stroke-dasharray:6 4}
svg .line{fill:none;stroke-width:1.8;stroke-linejoin:round}
svg .line.dashed{stroke-dasharray:5 4}
svg .ev line{stroke-width:1.5;stroke-dasharray:3 3}
svg .ev.warn line{stroke:#d62728}
svg .ev.info line{stroke:#1f77b4}
svg .ev.drop line{stroke:#9aa3b2;stroke-dasharray:1 3}
svg .ev line.hit{stroke:transparent;stroke-width:9;stroke-dasharray:none}
svg .ev text.evn{font-size:10px;font-weight:600}
svg .ev.warn text.evn{fill:#d62728}
svg .ev.info text.evn{fill:#1f77b4}
.tile .why{font-size:11px;color:#7a4b00;margin-top:4px}
.note,.empty{font-size:13px;color:#5b6475;margin:4px 0}
footer{font-size:12px;color:#5b6475;margin:20px 0}
)";

}  // namespace

std::string render_run_page(const RunLog& log, const facts::RunSummary& s,
                            const RunPageOptions& options) {
  const double origin = s.origin_ts;
  XRange xr;
  xr.hi = s.duration_s.value_or(0);
  for (const auto& sample : log.samples) {
    xr.lo = std::min(xr.lo, sample.ts - origin);
    xr.hi = std::max(xr.hi, sample.ts - origin);
  }
  for (const auto& e : log.events) {
    xr.lo = std::min(xr.lo, e.ts - origin);
    xr.hi = std::max(xr.hi, e.ts - origin);
  }
  if (!(xr.hi > xr.lo)) xr.hi = xr.lo + 1;

  std::vector<Marker> events;
  for (size_t i = 0; i < log.events.size(); ++i) {
    const auto& e = log.events[i];
    std::string gpu = e.gpu ? fmt::format(" GPU {}", *e.gpu) : "";
    events.push_back(Marker{e.ts - origin, std::string(runlog::severity_name(e.severity)),
                            fmt::format("{}. {} {}{}: {}", i + 1, format_elapsed(e.ts - origin),
                                        e.kind, gpu, e.message),
                            std::to_string(i + 1)});
  }

  std::vector<Chart> charts;
  auto gpu_chart = [&](std::string id, std::string title, std::string unit, bool from_zero,
                       std::optional<double> (*value)(const GpuSample&)) {
    Chart c;
    c.id = std::move(id);
    c.title = std::move(title);
    c.unit = std::move(unit);
    c.from_zero = from_zero;
    c.series = per_gpu(log, origin, value);
    return c;
  };
  {
    Chart c =
        gpu_chart("power", "GPU power", "W", true, [](const GpuSample& g) { return g.power_w; });
    std::optional<double> limit;
    for (const auto& g : s.gpus) {
      if (g.power_limit_w) limit = std::max(limit.value_or(0), *g.power_limit_w);
    }
    if (limit) {
      c.reference = std::make_pair(*limit, fmt::format("limit {:.0f} W", *limit));
    } else if (s.platform == "dgx-spark") {
      // GB10 reports no power limit through NVML; 002 G4's sustained cap is drawn instead.
      c.reference = std::make_pair(kGb10SustainedCapW, std::string("~100 W sustained cap (G4)"));
    }
    charts.push_back(std::move(c));
  }
  charts.push_back(gpu_chart("temperature", "GPU temperature", "\u00b0C", false,
                             [](const GpuSample& g) { return as_double(g.temp_c); }));
  charts.push_back(gpu_chart("sm-clock", "SM clock", "MHz", true,
                             [](const GpuSample& g) { return as_double(g.sm_clock_mhz); }));
  {
    Chart c;
    c.id = "host-memory";
    c.title = "Host memory: available and page cache";
    c.unit = "GB";
    c.series.push_back(
        host_series(log, origin, "available", kPalette[0],
                    [](const HostMemorySample& m) { return gb(m.available_bytes); }));
    c.series.push_back(
        host_series(log, origin, "page cache", kPalette[3], [](const HostMemorySample& m) {
          return gb(facts::page_cache_bytes(m.cached_bytes, m.buffers_bytes, m.shmem_bytes));
        }));
    c.series.push_back(host_series(log, origin, "anonymous", kPalette[4],
                                   [](const HostMemorySample& m) { return gb(m.anon_bytes); }));
    c.series.push_back(
        host_series(log, origin, "swap used", kPalette[5],
                    [](const HostMemorySample& m) { return gb(m.swap_used_bytes); }));
    std::erase_if(c.series, [](const Series& x) { return !x.any(); });
    if (s.host_total_bytes) {
      c.reference = std::make_pair(gb(*s.host_total_bytes),
                                   fmt::format("total {}", format_gb(*s.host_total_bytes)));
    }
    for (const auto& d : log.cache_drops) {
      c.extra_markers.push_back(
          Marker{d.ts - origin, "drop",
                 fmt::format("{} page cache dropped{}", format_elapsed(d.ts - origin),
                             d.ok ? "" : " (failed: " + d.error + ")"),
                 ""});
    }
    charts.push_back(std::move(c));
  }
  charts.push_back(process_chart(log, origin));
  {
    Chart c;
    c.id = "pressure";
    c.title = "Memory pressure (PSI, share of time stalled over 10 s)";
    c.unit = "%";
    c.series.push_back(host_series(log, origin, "some", kPalette[3],
                                   [](const HostMemorySample& m) { return m.psi_some_avg10; }));
    c.series.push_back(host_series(log, origin, "full", kPalette[1],
                                   [](const HostMemorySample& m) { return m.psi_full_avg10; }));
    if (c.series[0].any() || c.series[1].any()) charts.push_back(std::move(c));
  }

  // Header.
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
                     html_escape(options.title), kStyle);
  out += fmt::format("<h1>{}</h1>\n", html_escape(options.title));
  if (!s.argv.empty()) {
    out += fmt::format("<p class=\"cmd\"><code>{}</code></p>\n", html_escape(shell_words(s.argv)));
  }

  out += "<div class=\"tiles\">\n";
  if (s.end) {
    out += tile("exit status",
                s.end->signal ? fmt::format("{} ({})", s.end->exit_status, *s.end->signal)
                              : std::to_string(s.end->exit_status),
                s.end->exit_status != 0 ? "warn" : "");
  }
  auto shown = [](const auto& v, auto format) -> std::optional<std::string> {
    if (!v) return std::nullopt;
    return format(*v);
  };
  auto as_gb = [](uint64_t bytes) { return format_gb(bytes); };
  auto as_duration = [](double seconds) { return format_duration(seconds); };
  out += tile_or_why("duration", shown(s.duration_s, as_duration), "the log has no timed record");
  out += tile_or_why("peak GPU memory", shown(s.peak_gpu_mem_bytes, as_gb),
                     missing(log, "GPU memory (the device's figure or any process's)"));
  out += tile_or_why("peak host memory used", shown(s.peak_host_used_bytes, as_gb),
                     missing(log, "host memory"));
  out += tile_or_why("power-capped", shown(s.power_capped_s, as_duration),
                     missing(log, "clock-event counters or reasons"),
                     s.power_capped_s && *s.power_capped_s > 0 ? "warn" : "");
  out += tile_or_why("slowed (thermal)", shown(s.slowed_s, as_duration),
                     missing(log, "clock-event counters or reasons"),
                     s.slowed_s && *s.slowed_s > 0 ? "warn" : "");
  std::optional<double> max_temp;
  for (const auto& g : s.gpus) {
    if (g.max_temp_c) max_temp = std::max(max_temp.value_or(-1e9), *g.max_temp_c);
  }
  out += tile_or_why("max GPU temperature",
                     shown(max_temp, [](double t) { return fmt::format("{:.0f} \u00b0C", t); }),
                     missing(log, "a GPU temperature"));
  out += tile("events (warn)", fmt::format("{} ({})", s.events.size(), s.warn_events),
              s.warn_events > 0 ? "warn" : "");
  out += "</div>\n";

  out += "<table class=\"facts\">\n";
  if (!s.host.empty()) out += row("host", s.host);
  if (log.header && !log.header->platform_description.empty()) {
    out += row("platform", log.header->platform_description);
  } else if (!s.platform.empty()) {
    out += row("platform", s.platform);
  }
  if (log.header && log.header->driver_version && !log.header->driver_version->empty()) {
    out += row("driver", *log.header->driver_version);
  }
  if (log.header) {
    for (const auto& g : log.header->gpus) {
      std::string text = g.name && !g.name->empty() ? *g.name : "?";
      if (g.power_limit_w) text += fmt::format(", power limit {:.0f} W", *g.power_limit_w);
      out += row(fmt::format("GPU {}", g.index), text);
    }
  }
  if (!s.started.empty()) out += row("started", s.started);
  out += row("samples", s.interval_s ? fmt::format("{} every {:.1f} s", s.samples, *s.interval_s)
                                     : std::to_string(s.samples));
  if (s.peak_gpu_mem_bytes) {
    out += row("GPU memory peak",
               fmt::format("{} at {} ({})", format_gb(*s.peak_gpu_mem_bytes),
                           format_elapsed(s.peak_gpu_mem_at_s.value_or(0)),
                           s.gpu_mem_source == "device" ? "device total" : "sum of processes"));
  }
  if (s.peak_page_cache_bytes) out += row("page cache peak", format_gb(*s.peak_page_cache_bytes));
  if (s.min_available_bytes) out += row("lowest available", format_gb(*s.min_available_bytes));
  if (s.start) {
    if (!s.start->env_removed.empty()) {
      out += row("environment removed", join(s.start->env_removed, " "));
    }
    std::vector<std::string> set;
    for (const auto& [k, v] : s.start->env_set) set.push_back(k + "=" + v);
    if (!set.empty()) out += row("environment set", join(set, " "));
    for (const auto& t : s.start->tuned) {
      out += row("tuned", fmt::format("{} {} -> {}", t.path, t.old_value, t.new_value));
    }
    if (!s.start->preflight.empty()) out += row("preflight", s.start->preflight);
  }
  if (s.cache_drops > 0) {
    out += row("page cache drops",
               fmt::format("{}{}", s.cache_drops,
                           s.load_window_end ? "; stopped: " + *s.load_window_end : ""));
  }
  out += "</table>\n";

  for (const auto& c : charts) out += render_chart(c, events, xr);

  out += "<section class=\"chart\" id=\"events\">\n<h2>Events</h2>\n";
  if (log.events.empty()) {
    out += fmt::format("<p class=\"empty\">{}</p>\n",
                       log.samples.empty() ? "No telemetry in this log." : "No events.");
  } else {
    out +=
        "<table class=\"events\">\n<tr><th>#</th><th>time</th><th>severity</th><th>kind</th>"
        "<th>GPU</th><th>message</th></tr>\n";
    for (size_t i = 0; i < log.events.size(); ++i) {
      const auto& e = log.events[i];
      out += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "</tr>\n",
          runlog::severity_name(e.severity), i + 1, format_elapsed(e.ts - origin),
          runlog::severity_name(e.severity), html_escape(e.kind),
          e.gpu ? std::to_string(*e.gpu) : "", html_escape(e.message));
    }
    out += "</table>\n";
  }
  out += "</section>\n";

  std::vector<std::string> notes = s.notes;
  if (s.end) {
    for (const auto& n : s.end->notes) notes.push_back(n);
  }
  if (!notes.empty()) {
    out += "<section class=\"chart\" id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : notes) out += fmt::format("<li>{}</li>\n", html_escape(n));
    out += "</ul>\n</section>\n";
  }
  std::string version = log.header ? log.header->sparkdoc_version
                                   : (s.start ? s.start->sparkdoc_version : std::string());
  out += fmt::format(
      "<footer>sparkdoc report{}{}. Times are elapsed from the start of the run.</footer>\n",
      options.source.empty() ? "" : " of " + html_escape(options.source),
      version.empty() ? "" : ", log written by sparkdoc " + html_escape(version));
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace sparkdoc::report
