// The one explicit table of checks. `check`, `explain`, `--list` and the docs page are all
// printed from it; nothing registers itself: checks/list.h names every check in order, and
// each check's file (src/checks/NAME.cpp) defines its row.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

using CheckFn = Finding (*)(const Snapshot&, const Workload&, const facts::Platform&);
// Whether a check applies to the machine: nullopt when it does, else why not (the check then
// reports SKIP with that reason and its judgement does not run).
using AppliesFn = std::optional<std::string> (*)(const Snapshot&, const facts::Platform&);

struct CheckInfo {
  std::string_view id;           // "G3"; never reused for another meaning
  std::string_view title;        // "UMA OOM below 128 GB"
  std::string_view reads;        // which snapshot readings it judges
  std::string_view symptom;      // what a person sees
  std::string_view cause;        // why it happens
  std::string_view how_checked;  // what sparkdoc looks at
  std::string_view fix;          // what to do
  std::string_view source;       // "002 G3", "000 §6", "001"
  std::string_view keywords;     // extra words for `explain "symptom words"`
  CheckFn run;                   // the judgement
  AppliesFn applies = nullptr;   // null: every machine (the judgement says SKIP where it must)
};

// `const CheckInfo& g3_uma_headroom();` for every check in checks/list.h.
#define SPARKDOC_CHECK(name) const CheckInfo& name();
#include "checks/list.h"
#undef SPARKDOC_CHECK

// G1..G10 in order, then S1..Sn in order.
std::span<const CheckInfo> all_checks();
const CheckInfo* find_check(std::string_view id);  // case-insensitive; nullptr if unknown

// Runs the checks whose IDs are in `only` (all when empty), in table order. A check that
// throws becomes a FAIL naming the internal error, never a crash.
std::vector<Finding> run_checks(const Snapshot& snapshot, const Workload& workload,
                                const std::vector<std::string>& only = {});
// The same over any table (all_checks() is the one production table); the platform is
// classified once and handed to every check.
std::vector<Finding> run_checks(std::span<const CheckInfo> table, const Snapshot& snapshot,
                                const Workload& workload,
                                const std::vector<std::string>& only = {});

// Ranks checks against free text ("OOM while nvidia-smi shows free memory") for `explain`.
std::vector<const CheckInfo*> search_checks(std::string_view words, size_t max_results = 3);

}  // namespace sparkdoc::checks
