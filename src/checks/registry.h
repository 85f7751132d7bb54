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
}  // namespace sparkdoc::checks
namespace sparkdoc::job {
struct Job;
}
namespace sparkdoc::checks {
struct LintContext;
class LintSink;
// A lint rule's judgement of the job's files (checks/lint.h).
using LintFn = void (*)(const job::Job&, const LintContext&, LintSink&);

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
  LintFn lint = nullptr;         // set for the lint rules (checks/lint.h) instead of run
};

// `const CheckInfo& g3_uma_headroom();` for every check in checks/list.h.
#define SPARKDOC_CHECK(name) const CheckInfo& name();
#include "checks/list.h"
#undef SPARKDOC_CHECK

// G1..G10 in order, then S1..Sn in order.
std::span<const CheckInfo> all_checks();
// A check or lint rule by ID, case-insensitive; nullptr if unknown.
const CheckInfo* find_check(std::string_view id);

// Runs the checks whose IDs are in `only` (all when empty), in table order. A check that
// throws becomes a FAIL naming the internal error, never a crash.
std::vector<Finding> run_checks(const Snapshot& snapshot, const Workload& workload,
                                const std::vector<std::string>& only = {});
// The same over any table (all_checks() is the one production table); the platform is
// classified once and handed to every check.
std::vector<Finding> run_checks(std::span<const CheckInfo> table, const Snapshot& snapshot,
                                const Workload& workload,
                                const std::vector<std::string>& only = {});

// A check or lint rule found for free text, and how well it matched: the sum, over the query's
// words it shares, of the field's weight times the word's rarity across the table.
struct SearchHit {
  const CheckInfo* info = nullptr;
  double score = 0;
  std::vector<std::string> words;  // the query's words it matched, in query order
};
// When an entry answers: two or more shared words scoring kSearchMatchScore together, or one
// word scoring kSearchSingleWordScore alone (a keyword or title word at most two entries use).
// Below that, one shared word that many entries use is a coincidence, not a match.
inline constexpr double kSearchMatchScore = 6.0;
inline constexpr double kSearchSingleWordScore = 9.0;

// Ranks checks and lint rules against free text ("OOM while nvidia-smi shows free memory") for
// `explain`, best first; only entries that answer (an ID in the text always does).
std::vector<SearchHit> search_entries(std::string_view words, size_t max_results = 3);
std::vector<const CheckInfo*> search_checks(std::string_view words, size_t max_results = 3);

}  // namespace sparkdoc::checks
