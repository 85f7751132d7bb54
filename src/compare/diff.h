// Every reading that differs between two snapshots (two nodes, or one machine before and
// after), for `sparkdoc snapshot --diff A B --readings` (plain `--diff` is `sparkdoc compare`'s
// judged rows). Pure and deterministic.
//
// A reading is named by its JSON pointer into the snapshot's JSON (model/snapshot_json.h):
// "/gpu/nvml/devices/0/temperature_c". The differences are those of a JSON patch from A to B
// (RFC 6902, as nlohmann::json::diff makes it), in its order, except the time the snapshot was
// taken, which always differs.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
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

// Whether a difference is one that two snapshots of an unchanged machine taken a moment apart
// show anyway: the probes' own timings (/timings_ms/..., .../elapsed_ms), and a /proc/meminfo
// figure that moved by less than 1 % of the memory (`mem_total_bytes`; 0 when unknown, when
// no meminfo change is called jitter). Two snapshots of an idle machine two seconds apart
// differ in 20 readings, every one of them such.
bool is_moment_to_moment(const Difference& d, uint64_t mem_total_bytes);

struct DiffReport {
  std::vector<Difference> shown;
  size_t left_out = 0;  // moment-to-moment differences not in `shown`
};

// The differences worth reading: all of them with `all`, else those that are not
// moment-to-moment (counted in left_out).
DiffReport select_differences(std::vector<Difference> differences, uint64_t mem_total_bytes,
                              bool all);

// "~ /gpu/nvml/devices/0/temperature_c: 45 -> 61", "+ PATH: VALUE", "- PATH: VALUE", one line a
// difference, then "N reading(s) differ between A and B".
// With a DiffReport that left some out, a last line says how many and that --all shows them.
std::string render_diff_text(const std::vector<Difference>& differences, const std::string& a_name,
                             const std::string& b_name);
std::string render_diff_text(const DiffReport& report, const std::string& a_name,
                             const std::string& b_name);

// {"a": A, "b": B, "differences": [{"change": "changed"|"added"|"removed", "path", "before",
// "after"}], "left_out": N}; before and after are the values themselves (null when absent).
nlohmann::json render_diff_json(const DiffReport& report, const std::string& a_name,
                                const std::string& b_name);

}  // namespace sparkdoc::compare
