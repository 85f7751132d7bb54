// What reading the audit's cache costs (audit/fact_cache.h), beside nlohmann's parse of the
// same entries as JSON (the layout of the cache's format 2, one object per folder, RECORD and
// file), which is what reading it cost before.
//   fact_cache_parse FILE SITE_PACKAGES ARCHITECTURE VERSION [RUNS]
// FILE: a cache file (ROOT/audit/<hash>.bin); the key is the one it was written for.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "audit/fact_cache.h"

namespace {

using nlohmann::json;
using namespace sparkdoc::audit;

double median_ms(int runs, const std::function<void()>& work) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    work();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

json stamp_json(const FileStamp& s) {
  return json::array({s.device, s.inode, s.size, s.mtime_ns, s.ctime_ns});
}

json target_json(GpuTarget t) {
  return json::array({t.sm, static_cast<int>(t.variant)});
}

// The cache as format 2 wrote it: a line per entry.
std::string as_json(const FactCacheKey& key, const AuditCache& cache) {
  std::string out = json{{"format", 2},
                         {"sparkdoc", key.sparkdoc_version},
                         {"site_packages", key.site_packages},
                         {"architecture", key.architecture}}
                        .dump();
  out.pop_back();
  auto list = [&out](const char* name, const auto& entries, const auto& to_json) {
    out += fmt::format(",\"{}\":[", name);
    bool first = true;
    for (const auto& [entry_name, entry] : entries) {
      out += first ? "\n" : ",\n";
      first = false;
      out += to_json(entry_name, entry).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += "\n]";
  };
  list("folders", cache.index.folders, [](const std::string& name, const FolderListing& l) {
    return json{{"folder", name},
                {"stamp", stamp_json(l.stamp)},
                {"folders", l.folders},
                {"files", l.files}};
  });
  list("records", cache.index.records, [](const std::string& name, const RecordListing& l) {
    return json{{"record", name}, {"stamp", stamp_json(l.stamp)}, {"files", l.files}};
  });
  list("files", cache.files, [](const std::string& name, const CachedFile& c) {
    json j{{"file", name},
           {"stamp", stamp_json(c.stamp)},
           {"needed", c.facts.needed},
           {"rpath", c.facts.rpath},
           {"runpath", c.facts.runpath}};
    if (c.facts.machine) {
      j["machine"] = {c.facts.machine->elf_class, c.facts.machine->byte_order,
                      c.facts.machine->machine};
    }
    json groups = json::array();
    for (const CodeGroup& g : c.facts.gpu_code) {
      json sass = json::array();
      for (auto t : g.sass) sass.push_back(target_json(t));
      json ptx = json::array();
      for (const auto& p : g.ptx) {
        json e = target_json(p.target);
        e.push_back(p.isa);
        ptx.push_back(e);
      }
      groups.push_back({{"sass", sass}, {"ptx", ptx}, {"containers", g.containers}});
    }
    if (!groups.empty()) j["gpu"] = groups;
    return j;
  });
  return out + "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    fmt::print(stderr, "usage: {} FILE SITE_PACKAGES ARCHITECTURE VERSION [RUNS]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const FactCacheKey key{argv[2], argv[3], argv[4]};
  const int runs = argc > 5 ? std::max(1, std::atoi(argv[5])) : 21;
  auto parsed = parse_fact_cache(bytes, key);
  if (!parsed) {
    fmt::print(stderr, "not a cache for that key: {}\n", parsed.error().message);
    return 1;
  }
  const std::string text = as_json(key, *parsed);
  fmt::print("{} folders, {} RECORDs, {} files: {} bytes, as JSON {} bytes; median of {} runs\n",
             parsed->index.folders.size(), parsed->index.records.size(), parsed->files.size(),
             bytes.size(), text.size(), runs);
  fmt::print("parse_fact_cache                      {:7.2f} ms\n",
             median_ms(runs, [&] { (void)parse_fact_cache(bytes, key); }));
  fmt::print("render_fact_cache                     {:7.2f} ms\n",
             median_ms(runs, [&] { (void)render_fact_cache(key, *parsed); }));
  fmt::print("nlohmann::json::accept of the JSON    {:7.2f} ms (lexing alone)\n",
             median_ms(runs, [&] { (void)json::accept(text); }));
  fmt::print("nlohmann::json::parse of the JSON     {:7.2f} ms (the document, no entries)\n",
             median_ms(runs, [&] {
               json doc = json::parse(text);
               (void)doc;
             }));
  return 0;
}
