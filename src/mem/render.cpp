#include "mem/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "report/picture.h"

namespace sparkdoc::mem {
namespace {

using nlohmann::json;

constexpr size_t kWidth = 100;
constexpr size_t kCommandChars = 52;

// "  label      value  explanation": a 12-wide label, the value right-aligned in 9, the text
// from column 25 (and wrapped lines indented to it).
std::string row(std::string_view label, std::string_view value, std::string_view text) {
  std::string line = fmt::format("  {:<12}{:>9}  {}", label, value, text);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return wrap_text(line, kWidth, 25) + "\n";
}

std::string cut(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  size_t end = n - 3;
  // Never split a UTF-8 sequence: back up to its lead byte.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end)) + "...";
}

std::string percent(double v) {
  return fmt::format("{:.2f}%", v);
}

std::string gb(uint64_t bytes) {
  return format_gb(bytes);
}

uint64_t sub_or_zero(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

std::string process_label(const ProcessMemory& p) {
  if (!p.cmdline.empty()) return cut(p.cmdline, kCommandChars);
  if (!p.comm.empty()) return p.comm;
  if (!p.server_kind.empty()) return p.server_kind;
  return "(not in the process scan)";
}

// The host's memory as one bar of MemTotal, left to right: on unified memory the GPU processes
// (the three largest by name, the rest together) and what no process accounts for (the orphan
// estimate: the driver's share and allocations of killed runs), then the page cache, the rest in
// use (anonymous, kernel, shmem) and MemFree. The line marks where what is available starts
// when it is counted from the right (MemAvailable, plus free swap by NVIDIA's rule on unified
// memory), so what lies right of it is what a run can have.
report::BarChart host_bars(const MemReport& r) {
  const HostMemory& h = *r.host;
  report::Bar bar;
  uint64_t gpu = 0;
  if (r.unified) {
    std::vector<const ProcessMemory*> held;
    for (const auto& p : r.processes) {
      if (p.used_bytes && *p.used_bytes > 0) held.push_back(&p);
    }
    std::stable_sort(held.begin(), held.end(), [](const ProcessMemory* a, const ProcessMemory* b) {
      return *a->used_bytes > *b->used_bytes;
    });
    constexpr size_t kNamed = 3;
    uint64_t rest = 0;
    for (size_t i = 0; i < held.size(); ++i) {
      gpu = add_saturating(gpu, *held[i]->used_bytes);
      if (i < kNamed) {
        bar.parts.push_back(
            {fmt::format("pid {} {}", held[i]->pid, cut(process_label(*held[i]), 24)),
             *held[i]->used_bytes});
      } else {
        rest = add_saturating(rest, *held[i]->used_bytes);
      }
    }
    if (rest) bar.parts.push_back({"other GPU processes", rest});
    if (r.orphans.ok() && r.orphans->unaccounted_bytes > 0) {
      uint64_t unaccounted = static_cast<uint64_t>(r.orphans->unaccounted_bytes);
      bar.parts.push_back(
          {r.orphans->likely ? "unaccounted (orphans?)" : "unaccounted (driver)", unaccounted});
      gpu = add_saturating(gpu, unaccounted);
    }
  }
  bar.parts.push_back({"page cache", h.page_cache_bytes});
  uint64_t known = add_saturating(add_saturating(gpu, h.page_cache_bytes), h.free_bytes);
  bar.parts.push_back({"anonymous, kernel, other", sub_or_zero(h.total_bytes, known)});
  bar.parts.push_back({"free", h.free_bytes, true});
  report::BarChart chart;
  chart.bars.push_back(std::move(bar));
  chart.scale_bytes = h.total_bytes;
  uint64_t available = r.headroom && r.unified ? r.headroom->available_bytes : h.available_bytes;
  chart.marks.push_back({fmt::format("{} available right of the line", gb(available)),
                         sub_or_zero(h.total_bytes, available)});
  return chart;
}

// A discrete GPU's memory: its processes (NVML), the rest of what NVML counts as used, what
// the driver reserves, free.
std::optional<report::BarChart> device_bars(const MemReport& r, const GpuMemory& g) {
  if (!g.memory.ok() || g.memory->total_bytes == 0) return std::nullopt;
  uint64_t processes = 0;
  for (const auto& p : r.processes) {
    if (p.device == g.index && p.used_bytes) processes = add_saturating(processes, *p.used_bytes);
  }
  report::Bar bar;
  bar.parts.push_back({"processes", processes});
  bar.parts.push_back({"other used", sub_or_zero(g.memory->used_bytes, processes)});
  // NVML's v2 used leaves out what the driver reserves: total - used - free.
  bar.parts.push_back(
      {"reserved (driver)",
       sub_or_zero(g.memory->total_bytes, g.memory->used_bytes + g.memory->free_bytes)});
  bar.parts.push_back({"free", g.memory->free_bytes, true});
  report::BarChart chart;
  chart.bars.push_back(std::move(bar));
  chart.scale_bytes = g.memory->total_bytes;
  return chart;
}

std::string memory_section(const MemReport& r) {
  std::string out;
  if (!r.host.ok()) {
    return "Memory: /proc/meminfo not read (" + why_not(r.host) + ")\n";
  }
  const HostMemory& h = *r.host;
  if (r.unified) {
    out += fmt::format("Memory: one pool of {} shared by CPU and GPU\n", gb(h.total_bytes));
  } else {
    out += fmt::format("Host memory: {}\n", gb(h.total_bytes));
  }
  out += report::render_bar_chart_text(host_bars(r));
  if (r.headroom && r.unified) {
    const facts::Headroom& hr = *r.headroom;
    out += row("available", gb(hr.available_bytes),
               hr.hugepages ? "HugePages_Free x Hugepagesize, swap ignored (NVIDIA's rule)"
                            : fmt::format("MemAvailable {} + SwapFree {} (NVIDIA's rule for "
                                          "unified memory)",
                                          gb(h.available_bytes), gb(h.swap_free_bytes)));
    out += row(
        "headroom", format_gb(hr.bytes),
        fmt::format("after the {} safety floor: what G3 judges a run against", gb(hr.floor_bytes)));
    out += row("free", gb(h.free_bytes),
               "MemFree: what cudaMemGetInfo reports here (it leaves out cache and swap)");
  } else {
    out += row("available", gb(h.available_bytes), "MemAvailable");
    out += row("free", gb(h.free_bytes), "MemFree");
  }
  out += row("page cache", gb(h.page_cache_bytes),
             fmt::format("{} reclaimable by drop_caches; shmem {} and dirty {} stay",
                         gb(h.reclaimable_cache_bytes), gb(h.shmem_bytes), gb(h.dirty_bytes)));
  out += row("anonymous", gb(h.anon_bytes), "process memory (AnonPages)");
  if (h.kernel_recorded) {
    uint64_t kernel = h.slab_bytes + h.kernel_stack_bytes + h.page_tables_bytes;
    out += row("kernel", gb(kernel),
               fmt::format("slab {} ({} reclaimable), stacks {}, page tables {}", gb(h.slab_bytes),
                           gb(h.slab_reclaimable_bytes), gb(h.kernel_stack_bytes),
                           gb(h.page_tables_bytes)));
  } else {
    out += row("kernel", "-", "Slab, KernelStack and PageTables not in this snapshot");
  }
  if (h.hugepages_total > 0) {
    out += row("hugepages", gb(h.hugepages_total * h.hugepage_size_bytes),
               fmt::format("{} of {} pages of {} free", h.hugepages_free, h.hugepages_total,
                           format_binary(h.hugepage_size_bytes)));
  } else {
    out += row("hugepages", "-", "none configured");
  }
  if (h.swap_total_bytes > 0) {
    out +=
        row("swap", gb(h.swap_total_bytes),
            fmt::format(
                "{} used, {} free{}", gb(sub_or_zero(h.swap_total_bytes, h.swap_free_bytes)),
                gb(h.swap_free_bytes), r.unified ? " (counted as available: NVIDIA's rule)" : ""));
  } else {
    out += row("swap", "-", "none");
  }
  if (r.pressure.ok()) {
    const sys::Psi& p = *r.pressure;
    std::string text = "PSI, last 10 s: some tasks waited for memory (";
    if (p.full) text += fmt::format("all: {}; ", percent(p.full->avg10));
    text += fmt::format("5 min: {})", percent(p.some.avg300));
    out += row("pressure", percent(p.some.avg10), text);
  } else {
    out += row("pressure", "-", "PSI not read: " + why_not(r.pressure));
  }
  return out;
}

std::string gpu_section(const MemReport& r) {
  std::string out = "GPU (NVML)\n";
  if (!r.gpus.ok()) return out + "  " + why_not(r.gpus) + "\n";
  if (r.gpus->empty()) return out + "  NVML lists no devices\n";
  for (const auto& g : *r.gpus) {
    std::string name = g.name.empty() ? std::string("(unnamed)") : g.name;
    if (g.memory.ok()) {
      out += fmt::format("  GPU {} {}: {} used, {} free of {}\n", g.index, name,
                         gb(g.memory->used_bytes), gb(g.memory->free_bytes),
                         gb(g.memory->total_bytes));
      if (auto chart = device_bars(r, g)) out += report::render_bar_chart_text(*chart);
    } else if (g.memory.missing().why == Why::kNotSupported && r.unified) {
      out += wrap_text(fmt::format("  GPU {} {}: memory not supported by NVML on unified memory "
                                   "({}); its memory is the pool above",
                                   g.index, name, g.memory.missing().detail),
                       kWidth, 4) +
             "\n";
    } else {
      out += fmt::format("  GPU {} {}: memory not read ({})\n", g.index, name, why_not(g.memory));
    }
  }
  if (!r.unified && r.headroom && r.headroom->device) {
    out += fmt::format("  headroom {}: {}\n", format_gb(r.headroom->bytes), r.headroom->rule);
  }
  return out;
}

std::string process_section(const MemReport& r) {
  std::string out = "GPU memory per process (NVML)\n";
  if (!r.processes_listed.ok()) return out + "  " + why_not(r.processes_listed) + "\n";
  if (r.processes.empty()) return out + "  none listed\n";
  out += fmt::format("  {:>8}  {:>9}  {:>3}  {:<8}  {:<7}  {}\n", "PID", "MEMORY", "GPU", "TYPE",
                     "ROLE", "COMMAND");
  for (const auto& p : r.processes) {
    std::string memory = p.used_bytes ? gb(*p.used_bytes) : std::string("n/a");
    out += fmt::format("  {:>8}  {:>9}  {:>3}  {:<8}  {:<7}  {}\n", p.pid, memory, p.device, p.type,
                       role_key(p.role), process_label(p));
  }
  out += fmt::format("  {:>8}  {:>9}\n", "total", gb(r.processes_bytes));
  return out;
}

std::string holder_section(const MemReport& r) {
  std::string title = "Holding /dev/nvidia* but not listed by NVML";
  if (!r.unlisted_holders.ok()) return title + ": " + why_not(r.unlisted_holders) + "\n";
  if (r.unlisted_holders->empty()) return title + ": none\n";
  std::string out = title + "\n";
  for (const auto& u : *r.unlisted_holders) {
    std::string what = u.cuda ? "CUDA context (nvidia-uvm open): another PID namespace, or left "
                                "behind by a killed run"
                              : "driver or NVML user without a CUDA context (a monitor?)";
    std::string name = u.cmdline.empty() ? u.comm : cut(u.cmdline, kCommandChars);
    out += wrap_text(fmt::format("  {:>8}  {}: {}", u.pid, name, what), kWidth, 12) + "\n";
  }
  return out;
}

std::string orphan_section(const MemReport& r) {
  std::string title = r.unified ? "Orphaned allocations (estimate)"
                                : "GPU memory no process accounts for (estimate)";
  if (!r.orphans.ok()) return title + ": not estimated: " + why_not(r.orphans) + "\n";
  const OrphanEstimate& e = *r.orphans;
  std::string verdict =
      e.likely ? "likely held by processes that are gone"
               : fmt::format("within the {} that is normal here", gb(e.allowance_bytes));
  std::string out = fmt::format("{}: {}, {}\n", title, format_gb(e.unaccounted_bytes), verdict);
  if (e.unified) {
    out += wrap_text("  " + e.formula, kWidth, 4) + "\n";
  } else {
    for (const auto& line : e.device_lines) out += "  " + line + "\n";
  }
  for (const auto& c : e.caveats) out += wrap_text("  note: " + c, kWidth, 4) + "\n";
  if (!e.advice.empty()) {
    out += "  to free it:\n";
    for (size_t i = 0; i < e.advice.size(); ++i) {
      out += wrap_text(fmt::format("  {}. {}", i + 1, e.advice[i]), kWidth, 5) + "\n";
    }
  }
  return out;
}

json missing_json(const Missing& m) {
  return json{{"absent", std::string(why_name(m.why))}, {"detail", m.detail}};
}

template <class T, class F>
json reading_json(const Reading<T>& r, F&& to) {
  return r.ok() ? to(*r) : missing_json(r.missing());
}

json host_json(const MemReport& r, const HostMemory& h) {
  json j = {
      {"total_bytes", h.total_bytes},
      {"free_bytes", h.free_bytes},
      {"mem_available_bytes", h.available_bytes},
      {"page_cache_bytes", h.page_cache_bytes},
      {"reclaimable_cache_bytes", h.reclaimable_cache_bytes},
      {"shmem_bytes", h.shmem_bytes},
      {"dirty_bytes", h.dirty_bytes},
      {"anon_bytes", h.anon_bytes},
      {"kernel_recorded", h.kernel_recorded},
      {"slab_bytes", h.slab_bytes},
      {"slab_reclaimable_bytes", h.slab_reclaimable_bytes},
      {"kernel_stack_bytes", h.kernel_stack_bytes},
      {"page_tables_bytes", h.page_tables_bytes},
      {"hugepages",
       {{"total", h.hugepages_total},
        {"free", h.hugepages_free},
        {"size_bytes", h.hugepage_size_bytes}}},
      {"swap",
       {{"total_bytes", h.swap_total_bytes},
        {"free_bytes", h.swap_free_bytes},
        {"used_bytes", sub_or_zero(h.swap_total_bytes, h.swap_free_bytes)},
        {"cached_bytes", h.swap_cached_bytes}}},
  };
  if (r.headroom) {
    j["available_bytes"] = r.headroom->available_bytes;
    j["available_rule"] = r.headroom->rule;
    j["headroom_bytes"] = r.headroom->bytes;
    j["floor_bytes"] = r.headroom->floor_bytes;
  } else {
    j["available_bytes"] = nullptr;
    j["available_rule"] = nullptr;
    j["headroom_bytes"] = nullptr;
    j["floor_bytes"] = nullptr;
  }
  return j;
}

json psi_line(const sys::PsiLine& l) {
  return {{"avg10", l.avg10}, {"avg60", l.avg60}, {"avg300", l.avg300}, {"total_us", l.total_us}};
}

}  // namespace

std::string render_mem_text(const MemReport& r) {
  std::string out = fmt::format("sparkdoc mem: {}\n", r.platform.description);
  std::string where = r.hostname.empty() ? std::string() : "host " + r.hostname + ", ";
  out += fmt::format("{}taken {} ({})\n\n", where, r.taken_at, r.source);
  out += memory_section(r) + "\n";
  out += gpu_section(r) + "\n";
  out += process_section(r) + "\n";
  out += holder_section(r) + "\n";
  out += orphan_section(r);
  if (!r.stoppable.empty()) {
    std::vector<std::string> who;
    for (const auto& k : r.stoppable) {
      std::string held;
      for (const auto& p : r.processes) {
        if (static_cast<int>(p.pid) == k.pid && p.used_bytes) held = ", " + gb(*p.used_bytes);
      }
      who.push_back(fmt::format("{} (pid {}{})", k.kind, k.pid, held));
    }
    out += "\n" +
           wrap_text(fmt::format("Desktop services holding GPU memory: {}; stop before a "
                                 "load with `sparkdoc clean --yes --stop-known` (000 §6)",
                                 join(who, ", ")),
                     kWidth, 2) +
           "\n";
  }
  for (const auto& n : r.notes) out += wrap_text("note: " + n, kWidth, 2) + "\n";
  return out;
}

std::string render_mem_html(const MemReport& r) {
  using report::html_escape;
  std::string body =
      fmt::format("<p>{}; {}taken {} ({})</p>\n", html_escape(r.platform.description),
                  r.hostname.empty() ? "" : "host " + html_escape(r.hostname) + ", ",
                  html_escape(r.taken_at), html_escape(r.source));
  body += "<section id=\"pool\">\n";
  if (!r.host.ok()) {
    body += fmt::format("<h2>Memory</h2>\n<p>/proc/meminfo not read ({})</p>\n",
                        html_escape(why_not(r.host)));
  } else {
    const HostMemory& h = *r.host;
    std::string title = r.unified
                            ? fmt::format("One pool of {} shared by CPU and GPU", gb(h.total_bytes))
                            : fmt::format("Host memory: {}", gb(h.total_bytes));
    body += fmt::format("<h2>{}</h2>\n", html_escape(title));
    body += report::render_bar_chart_svg(host_bars(r), title);
    if (r.headroom && r.unified) {
      body += fmt::format(
          "<p>available {} ({}); headroom {} after the {} floor, what G3 judges a "
          "run against</p>\n",
          gb(r.headroom->available_bytes), html_escape(r.headroom->rule), gb(r.headroom->bytes),
          gb(r.headroom->floor_bytes));
    }
    body += fmt::format("<p>page cache {}: {} reclaimable by drop_caches</p>\n",
                        gb(h.page_cache_bytes), gb(h.reclaimable_cache_bytes));
  }
  body += "</section>\n";
  if (r.gpus.ok()) {
    for (const auto& g : *r.gpus) {
      auto chart = device_bars(r, g);
      if (!chart) continue;
      std::string title = fmt::format("GPU {} {}: {} used of {}", g.index, g.name,
                                      gb(g.memory->used_bytes), gb(g.memory->total_bytes));
      body += fmt::format("<section>\n<h2>{}</h2>\n", html_escape(title));
      body += report::render_bar_chart_svg(*chart, title) + "</section>\n";
    }
  }
  body += "<section id=\"processes\">\n<h2>GPU memory per process (NVML)</h2>\n";
  if (!r.processes_listed.ok()) {
    body += fmt::format("<p>{}</p>\n", html_escape(why_not(r.processes_listed)));
  } else if (r.processes.empty()) {
    body += "<p>none listed</p>\n";
  } else {
    body +=
        "<table class=\"facts\">\n<tr><th>PID</th><th>memory</th><th>GPU</th><th>role</th>"
        "<th>command</th></tr>\n";
    for (const auto& p : r.processes) {
      body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          p.pid, p.used_bytes ? gb(*p.used_bytes) : std::string("n/a"), p.device,
                          role_key(p.role), html_escape(process_label(p)));
    }
    body += "</table>\n";
  }
  body += "</section>\n";
  if (r.orphans.ok()) {
    const OrphanEstimate& e = *r.orphans;
    body +=
        fmt::format("<section id=\"orphans\">\n<h2>Unaccounted (estimate): {}</h2>\n<p>{}</p>\n",
                    format_gb(e.unaccounted_bytes),
                    html_escape(e.unified ? e.formula : join(e.device_lines, "; ")));
    for (const auto& a : e.advice) body += fmt::format("<p>to free it: {}</p>\n", html_escape(a));
    body += "</section>\n";
  }
  return report::render_picture_page(
      "sparkdoc mem", body,
      fmt::format("sparkdoc mem {}; bars drawn to scale, hover a part for its size",
                  r.sparkdoc_version));
}

json render_mem_json(const MemReport& r) {
  json j;
  j["sparkdoc_version"] = r.sparkdoc_version;
  j["taken_at"] = r.taken_at;
  j["hostname"] = r.hostname;
  j["source"] = r.source;
  j["platform"] = {{"key", r.platform.key},
                   {"description", r.platform.description},
                   {"unified_memory", r.unified}};
  j["memory"] = reading_json(r.host, [&](const HostMemory& h) { return host_json(r, h); });
  j["pressure"] = reading_json(r.pressure, [](const sys::Psi& p) {
    json out = {{"some", psi_line(p.some)}};
    out["full"] = p.full ? psi_line(*p.full) : json(nullptr);
    return out;
  });
  j["gpus"] = reading_json(r.gpus, [](const std::vector<GpuMemory>& gpus) {
    json arr = json::array();
    for (const auto& g : gpus) {
      arr.push_back({{"index", g.index},
                     {"name", g.name},
                     {"memory", reading_json(g.memory, [](const gpu::MemoryInfo& m) {
                        return json{{"total_bytes", m.total_bytes},
                                    {"free_bytes", m.free_bytes},
                                    {"used_bytes", m.used_bytes}};
                      })}});
    }
    return arr;
  });
  json procs = json::array();
  for (const auto& p : r.processes) {
    procs.push_back({{"pid", p.pid},
                     {"device", p.device},
                     {"type", p.type},
                     {"used_bytes", p.used_bytes ? json(*p.used_bytes) : json(nullptr)},
                     {"in_scan", p.in_scan},
                     {"comm", p.comm},
                     {"cmdline", p.cmdline},
                     {"server_kind", p.server_kind},
                     {"role", std::string(role_key(p.role))},
                     {"note", p.note}});
  }
  j["processes"] = reading_json(r.processes_listed, [&](bool) { return procs; });
  j["processes_total_bytes"] = r.processes_bytes;
  j["unlisted_holders"] =
      reading_json(r.unlisted_holders, [](const std::vector<UnlistedHolder>& holders) {
        json arr = json::array();
        for (const auto& u : holders) {
          arr.push_back({{"pid", u.pid},
                         {"comm", u.comm},
                         {"cmdline", u.cmdline},
                         {"devices", u.devices},
                         {"cuda", u.cuda},
                         {"server_kind", u.server_kind},
                         {"role", std::string(role_key(u.role))}});
        }
        return arr;
      });
  j["orphaned"] = reading_json(r.orphans, [](const OrphanEstimate& e) {
    return json{{"estimate", true},
                {"unified_memory", e.unified},
                {"unaccounted_bytes", e.unaccounted_bytes},
                {"allowance_bytes", e.allowance_bytes},
                {"likely", e.likely},
                {"in_use_bytes", e.in_use_bytes},
                {"itemised_bytes", e.itemised_bytes},
                {"hugepages_free_bytes", e.hugepages_free_bytes},
                {"processes_bytes", e.processes_bytes},
                {"processes_known", e.processes_known},
                {"devices", e.device_lines},
                {"formula", e.formula},
                {"caveats", e.caveats},
                {"advice", e.advice}};
  });
  json stoppable = json::array();
  for (const auto& k : r.stoppable) {
    stoppable.push_back({{"pid", k.pid}, {"kind", k.kind}, {"cmdline", k.cmdline}});
  }
  j["stoppable"] = stoppable;
  j["notes"] = r.notes;
  return j;
}

}  // namespace sparkdoc::mem
