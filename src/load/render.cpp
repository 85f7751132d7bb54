#include "load/render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/printable.h"
#include "core/units.h"

namespace sparkdoc::load {
namespace {

std::string mib(int64_t bytes) {
  return fmt::format("{:+.1f} MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
}

nlohmann::json run_json(const Measured& m) {
  return {{"seconds", m.stats.seconds},
          {"gb_per_s", m.stats.gb_per_second()},
          {"bytes", m.stats.copy_bytes},
          {"bytes_read", m.stats.read_bytes},
          {"readers", m.stats.readers},
          {"reads", m.stats.chunks},
          {"rss_before_bytes", m.memory.rss_before_bytes},
          {"peak_rss_bytes", m.memory.peak_rss_bytes},
          {"peak_rss_growth_bytes", m.memory.peak_rss_growth_bytes()},
          {"peak_rss_exact", m.memory.peak_rss_exact},
          {"page_cache_growth_bytes", m.memory.page_cache_known
                                          ? nlohmann::json(m.memory.page_cache_growth_bytes())
                                          : nlohmann::json(nullptr)},
          {"page_cache_peak_growth_bytes",
           m.memory.page_cache_known ? nlohmann::json(m.memory.page_cache_peak_growth_bytes())
                                     : nlohmann::json(nullptr)}};
}

}  // namespace

std::string render_run_line(const Measured& m) {
  std::string line = fmt::format("{} in {:.3f} s: {:.1f} GB/s; peak RSS {} ({}); page cache ",
                                 format_gb(m.stats.copy_bytes), m.stats.seconds,
                                 m.stats.gb_per_second(), mib(m.memory.peak_rss_growth_bytes()),
                                 m.memory.peak_rss_exact ? "during the load" : "process peak");
  if (m.memory.page_cache_known) {
    line += fmt::format("{} (peak {})", mib(m.memory.page_cache_growth_bytes()),
                        mib(m.memory.page_cache_peak_growth_bytes()));
  } else {
    line += "unknown";
  }
  return line;
}

std::string render_load_text(const CheckpointLoad& load, int device, bool bench) {
  const auto& checkpoint = load.checkpoint;
  const auto& last = load.runs.back();
  std::string out =
      fmt::format("loaded {} tensors from {} file{} to GPU {}: {}\n", checkpoint.tensors.size(),
                  checkpoint.shards.size(), checkpoint.shards.size() == 1 ? "" : "s", device,
                  render_run_line(bench ? load.best() : last));
  if (bench) {
    const auto& o = load.options;
    out += fmt::format(
        "setup {:.3f} s (context, {} staging: {} readers x {} slots x {}); device memory {:.3f} "
        "s; best of {} runs\n",
        load.setup_seconds, format_binary(load.staging_bytes), o.readers, o.slots_per_reader,
        format_binary(o.chunk_bytes), load.alloc_seconds, load.runs.size());
    for (const auto& f : last.stats.files) out += "  " + printable(f.path) + ": " + f.mode + "\n";
  }
  if (load.differ) {
    if (load.differ->empty()) {
      out += fmt::format("verified: all {} tensors match a plain read of the files\n",
                         checkpoint.tensors.size());
    } else {
      out += fmt::format("verify FAILED: {} tensors differ, first '{}'\n", load.differ->size(),
                         printable(load.differ->front()));
    }
  }
  return out;
}

nlohmann::json render_load_json(const CheckpointLoad& load, const std::string& path, int device) {
  nlohmann::json doc = {{"ok", load.ok()},
                        {"path", path},
                        {"device", device},
                        {"tensors", load.checkpoint.tensors.size()},
                        {"bytes", load.checkpoint.data_bytes()},
                        {"readers", load.options.readers},
                        {"chunk_bytes", load.options.chunk_bytes},
                        {"slots_per_reader", load.options.slots_per_reader},
                        {"staging_bytes", load.staging_bytes},
                        {"setup_seconds", load.setup_seconds},
                        {"alloc_seconds", load.alloc_seconds},
                        {"best_gb_per_s", load.best().stats.gb_per_second()}};
  doc["files"] = nlohmann::json::array();
  for (const auto& f : load.runs.back().stats.files) {
    doc["files"].push_back({{"path", f.path}, {"direct", f.direct}, {"mode", f.mode}});
  }
  doc["runs"] = nlohmann::json::array();
  for (const auto& m : load.runs) doc["runs"].push_back(run_json(m));
  if (load.differ) {
    doc["verify"] = {{"checked", load.checkpoint.tensors.size()}, {"differ", *load.differ}};
  }
  return doc;
}

}  // namespace sparkdoc::load
