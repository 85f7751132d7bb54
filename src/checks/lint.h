// The lint rules: checks of the training job rather than the machine (sparkdoc lint, check
// --lint, run's pre-launch lint). A rule is a pure function of the job's files as the job probe
// read them (model/job.h) and the context it is judged for; it reports one finding per place
// that breaks it, each with its file and line. Rules are listed in checks/lint_list.h; their
// catalogue rows (explain, --list, docs) are CheckInfo rows with `lint` set.
//
// IDs are the L family, append-only like every check ID: L1..Ln keep their meaning forever.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "checks/registry.h"
#include "model/job.h"

namespace sparkdoc::checks {

// What the job is judged for.
struct LintContext {
  // The job runs on a DGX Spark (GB10). `sparkdoc lint` assumes so unless told otherwise
  // (--for other); `check --lint` takes it from the machine.
  bool spark = true;
};

struct LintFinding {
  std::string id;  // "L3"
  Verdict verdict = Verdict::kWarn;
  std::string file;
  uint32_t line = 0;
  std::string detail;  // what is wrong here and what to do
  bool operator==(const LintFinding&) const = default;
};

// Where a rule reports.
class LintSink {
 public:
  void add(Verdict verdict, const job::JobFile& file, uint32_t line, std::string detail);
  std::vector<LintFinding>& findings() { return findings_; }
  void set_rule(std::string_view id) { id_ = id; }

 private:
  std::string_view id_;
  std::vector<LintFinding> findings_;
};

// The lint rules' table, in report order, from checks/lint_list.h.
std::span<const CheckInfo> all_lint_rules();

// Runs every rule (or those in `only`); findings in file, line and rule order. A finding on a
// line whose comment says "sparkdoc: ignore <ID>" is dropped. A rule that throws becomes one
// FAIL naming the internal error, never a crash.
std::vector<LintFinding> run_lint(const job::Job& job, const LintContext& context,
                                  const std::vector<std::string>& only = {});

// `const CheckInfo& l3_torch_dtype();` for every rule in checks/lint_list.h.
#define SPARKDOC_LINT(name) const CheckInfo& name();
#include "checks/lint_list.h"
#undef SPARKDOC_LINT

}  // namespace sparkdoc::checks
