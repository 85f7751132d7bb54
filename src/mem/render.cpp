#include "mem/render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"

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
