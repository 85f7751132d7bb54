// Every reading that differs between two snapshots (two nodes, or one machine before and
// after), for `sparkdoc snapshot --diff`. Pure and deterministic.
//
// A reading is named by its JSON pointer into the snapshot's JSON (model/snapshot_json.h):
// "/gpu/nvml/devices/0/temperature_c". The differences are those of a JSON patch from A to B
// (RFC 6902, as nlohmann::json::diff makes it), in its order, except the time the snapshot was
// taken, which always differs.
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.h"

namespace sparkdoc::compare {

enum class Change {
  kChanged,  // in both, with other values
  kAdded,    // only in B
  kRemoved,  // only in A
};

struct Difference {
  Change change = Change::kChanged;
  std::string path;    // JSON pointer; an array element added to B names its index in B
  std::string before;  // A's value as compact JSON; empty when added
  std::string after;   // B's value as compact JSON; empty when removed
  bool operator==(const Difference&) const = default;
};

std::vector<Difference> diff_snapshots(const Snapshot& a, const Snapshot& b);

// "~ /gpu/nvml/devices/0/temperature_c: 45 -> 61", "+ PATH: VALUE", "- PATH: VALUE", one line a
// difference, then "N reading(s) differ between A and B".
std::string render_diff_text(const std::vector<Difference>& differences, const std::string& a_name,
                             const std::string& b_name);

}  // namespace sparkdoc::compare
