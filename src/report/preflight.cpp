#include "report/preflight.h"

#include <fmt/format.h>

#include <ostream>

#include "checks/finding.h"
#include "core/strings.h"
#include "report/report.h"

namespace sparkdoc::report {

std::optional<std::string> judge_preflight(const Snapshot& snapshot,
                                           const std::vector<std::string>& command,
                                           std::vector<checks::Finding> job_findings, bool force,
                                           std::ostream& say) {
  Workload workload;
  workload.command = join(command, " ");
  CheckReport rep = make_report(snapshot, workload, {}, "live");
  for (checks::Finding& f : job_findings) rep.findings.push_back(std::move(f));
  Readiness ready = readiness(rep.findings, false);
  size_t fails = 0;
  size_t warns = 0;
  size_t skips = 0;
  for (const auto& f : rep.findings) {
    if (f.verdict == checks::Verdict::kFail || f.verdict == checks::Verdict::kWarn) {
      ++(f.verdict == checks::Verdict::kFail ? fails : warns);
      say << fmt::format("{} {}: {}\n", f.id, checks::verdict_word(f.verdict), f.detail);
    }
    if (f.verdict == checks::Verdict::kSkip) ++skips;
  }
  std::string verdict(readiness_key(ready));
  if (ready == Readiness::kBlocked) {
    if (!force) {
      say << fmt::format(
          "sparkdoc run: preflight blocked the run ({} FAIL above; `sparkdoc check` shows every "
          "line, `sparkdoc lint` the job's); fix them, or pass --force to run anyway. Nothing "
          "was started.\n",
          fails);
      return std::nullopt;
    }
    say << fmt::format("sparkdoc run: preflight: {} FAIL; running anyway (--force)\n", fails);
    return verdict + " (--force)";
  }
  std::string counts = warns == 0   ? std::string("no warnings")
                       : warns == 1 ? std::string("1 warning above")
                                    : fmt::format("{} warnings above", warns);
  if (skips) counts += fmt::format(", {} check{} skipped", skips, skips == 1 ? "" : "s");
  say << fmt::format(
      "sparkdoc run: preflight: {} ({}; `sparkdoc check` and `sparkdoc lint` show every "
      "line)\n",
      verdict, counts);
  return verdict;
}

}  // namespace sparkdoc::report
