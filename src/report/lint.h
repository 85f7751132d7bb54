// `sparkdoc lint` as text and JSON: one line per finding in the check contract
// ("L27 WARN: run.sh:13: ..."), what was read and skipped, and a verdict.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "checks/lint.h"
#include "model/job.h"

namespace sparkdoc::report {

struct LintReport {
  std::vector<std::string> roots;
  size_t files = 0;
  std::vector<std::string> skipped;
  bool spark = true;
  std::vector<checks::LintFinding> findings;
};

LintReport make_lint_report(const job::Job& job, const checks::LintContext& context,
                            std::vector<checks::LintFinding> findings);

// "L27 WARN: run.sh:13: ionice applies to ...", the verdict coloured as check's when `color`.
std::string lint_line(const checks::LintFinding& finding, bool color = false);
std::string render_lint_text(const LintReport& report, bool strict, bool color = false);
nlohmann::json render_lint_json(const LintReport& report, bool strict);

// Lint findings as lines of the check report (`check --lint`, run's preflight): the ID and
// verdict kept, "file:line: " leading the detail.
std::vector<checks::Finding> lint_check_findings(const std::vector<checks::LintFinding>& findings);

// 1 on any FAIL (with strict, any WARN), else 0.
int lint_exit_status(const std::vector<checks::LintFinding>& findings, bool strict);

}  // namespace sparkdoc::report
