#include "compare/diff.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "model/snapshot_json.h"

namespace sparkdoc::compare {
namespace {

using nlohmann::json;

// nlohmann::json::diff appends elements that only B's array has as "PARENT/-" (RFC 6902's
// end of the array), in order; they are B's elements from the end of A's array on.
std::string added_path(const std::string& path, const json& a,
                       std::map<std::string, size_t>& next_index) {
  if (!path.ends_with("/-")) return path;
  std::string parent = path.substr(0, path.size() - 2);
  auto [it, fresh] = next_index.try_emplace(parent, 0);
  if (fresh) {
    json::json_pointer ptr(parent);
    it->second = a.contains(ptr) ? a.at(ptr).size() : 0;
  }
  return parent + "/" + std::to_string(it->second++);
}

const char* change_name(Change change) {
  switch (change) {
    case Change::kChanged:
      return "changed";
    case Change::kAdded:
      return "added";
    case Change::kRemoved:
      return "removed";
  }
  return "changed";
}

json parsed_or_null(const std::string& text) {
  if (text.empty()) return nullptr;
  return json::parse(text, nullptr, false);
}

}  // namespace

bool is_moment_to_moment(const Difference& d, uint64_t mem_total_bytes) {
  if (d.path.starts_with("/timings_ms/") || d.path.ends_with("/elapsed_ms")) return true;
  if (!d.path.starts_with("/meminfo/") || d.change != Change::kChanged || mem_total_bytes == 0) {
    return false;
  }
  json before = json::parse(d.before, nullptr, false);
  json after = json::parse(d.after, nullptr, false);
  if (!before.is_number() || !after.is_number()) return false;
  double moved = std::abs(after.get<double>() - before.get<double>());
  return moved < 0.01 * static_cast<double>(mem_total_bytes);
}

DiffReport select_differences(std::vector<Difference> differences, uint64_t mem_total_bytes,
                              bool all) {
  DiffReport report;
  for (auto& d : differences) {
    if (!all && is_moment_to_moment(d, mem_total_bytes)) {
      ++report.left_out;
    } else {
      report.shown.push_back(std::move(d));
    }
  }
  return report;
}

std::vector<Difference> diff_snapshots(const Snapshot& a, const Snapshot& b) {
  json ja = snapshot_to_json(a);
  json jb = snapshot_to_json(b);
  std::vector<Difference> out;
  std::map<std::string, size_t> next_index;
  for (const auto& op : json::diff(ja, jb)) {
    std::string path = op.at("path").get<std::string>();
    std::string kind = op.at("op").get<std::string>();
    if (path == "/taken_at") continue;
    Difference d;
    d.path = path;
    if (kind == "replace") {
      d.change = Change::kChanged;
      d.before = ja.at(json::json_pointer(path)).dump();
      d.after = op.at("value").dump();
    } else if (kind == "add") {
      d.change = Change::kAdded;
      d.path = added_path(path, ja, next_index);
      d.after = op.at("value").dump();
    } else if (kind == "remove") {
      d.change = Change::kRemoved;
      d.before = ja.at(json::json_pointer(path)).dump();
    } else {
      continue;  // diff() makes no move, copy or test
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string render_diff_text(const std::vector<Difference>& differences, const std::string& a_name,
                             const std::string& b_name) {
  std::string out;
  for (const auto& d : differences) {
    switch (d.change) {
      case Change::kChanged:
        out += fmt::format("~ {}: {} -> {}\n", d.path, d.before, d.after);
        break;
      case Change::kAdded:
        out += fmt::format("+ {}: {}\n", d.path, d.after);
        break;
      case Change::kRemoved:
        out += fmt::format("- {}: {}\n", d.path, d.before);
        break;
    }
  }
  out +=
      fmt::format("{} reading(s) differ between {} and {}\n", differences.size(), a_name, b_name);
  return out;
}

std::string render_diff_text(const DiffReport& report, const std::string& a_name,
                             const std::string& b_name) {
  std::string out = render_diff_text(report.shown, a_name, b_name);
  if (report.left_out > 0) {
    out += fmt::format(
        "{} more differ from moment to moment on any machine (the probes' timings, memory "
        "figures that moved by less than 1 %) and are left out; --all shows them\n",
        report.left_out);
  }
  return out;
}

json render_diff_json(const DiffReport& report, const std::string& a_name,
                      const std::string& b_name) {
  json differences = json::array();
  for (const auto& d : report.shown) {
    differences.push_back({{"change", change_name(d.change)},
                           {"path", d.path},
                           {"before", parsed_or_null(d.before)},
                           {"after", parsed_or_null(d.after)}});
  }
  return {
      {"a", a_name}, {"b", b_name}, {"differences", differences}, {"left_out", report.left_out}};
}

}  // namespace sparkdoc::compare
