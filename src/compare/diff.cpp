#include "compare/diff.h"

#include <fmt/format.h>

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

}  // namespace

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

}  // namespace sparkdoc::compare
