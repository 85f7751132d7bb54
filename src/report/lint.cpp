#include "report/lint.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/printable.h"
#include "report/report.h"

namespace sparkdoc::report {
namespace {

using checks::Verdict;

size_t count(const std::vector<checks::LintFinding>& findings, Verdict v) {
  size_t n = 0;
  for (const auto& f : findings) n += f.verdict == v;
  return n;
}

std::string verdict_text(const std::vector<checks::LintFinding>& findings, bool strict) {
  if (lint_exit_status(findings, strict) != 0) return "blocked";
  return count(findings, Verdict::kWarn) > 0 ? "ready-with-warnings" : "ready";
}

std::string location(const checks::LintFinding& f) {
  if (f.file.empty()) return "";
  return f.line > 0 ? fmt::format("{}:{}: ", f.file, f.line) : f.file + ": ";
}

}  // namespace

LintReport make_lint_report(const job::Job& job, const checks::LintContext& context,
                            std::vector<checks::LintFinding> findings) {
  LintReport r;
  r.roots = job.roots;
  r.files = job.files.size();
  r.skipped = job.skipped;
  r.spark = context.spark;
  r.findings = std::move(findings);
  return r;
}

std::string lint_line(const checks::LintFinding& f, bool color) {
  // Paths and quoted lines come from the job's files: one line each, never terminal controls.
  return fmt::format("{} {}: {}", f.id, colored_verdict(f.verdict, color),
                     printable(location(f) + f.detail));
}

std::string render_lint_text(const LintReport& r, bool strict, bool color) {
  std::string out = fmt::format(
      "sparkdoc lint: {} file{} read{}, judged for {}\n", r.files, r.files == 1 ? "" : "s",
      r.roots.empty() ? "" : " in " + fmt::format("{}", fmt::join(r.roots, ", ")),
      r.spark ? "a DGX Spark (--for other: any machine)" : "any machine");
  for (const auto& s : r.skipped) out += "not read: " + s + "\n";
  for (const auto& f : r.findings) out += lint_line(f, color) + "\n";
  out += fmt::format("verdict: {} ({} FAIL, {} WARN, {} INFO)\n", verdict_text(r.findings, strict),
                     count(r.findings, Verdict::kFail), count(r.findings, Verdict::kWarn),
                     count(r.findings, Verdict::kInfo));
  return out;
}

nlohmann::json render_lint_json(const LintReport& r, bool strict) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) {
    const checks::CheckInfo* info = checks::find_check(f.id);
    findings.push_back({{"id", f.id},
                        {"verdict", checks::verdict_key(f.verdict)},
                        {"file", f.file},
                        {"line", f.line},
                        {"detail", f.detail},
                        {"title", info ? std::string(info->title) : ""},
                        {"source", info ? std::string(info->source) : ""}});
  }
  return {{"roots", r.roots},
          {"files", r.files},
          {"skipped", r.skipped},
          {"for", r.spark ? "dgx-spark" : "any"},
          {"findings", std::move(findings)},
          {"verdict", verdict_text(r.findings, strict)}};
}

std::vector<checks::Finding> lint_check_findings(const std::vector<checks::LintFinding>& findings) {
  std::vector<checks::Finding> out;
  out.reserve(findings.size());
  for (const auto& f : findings) out.push_back({f.id, f.verdict, location(f) + f.detail, {}});
  return out;
}

int lint_exit_status(const std::vector<checks::LintFinding>& findings, bool strict) {
  for (const auto& f : findings) {
    if (f.verdict == Verdict::kFail || (strict && f.verdict == Verdict::kWarn)) return 1;
  }
  return 0;
}

}  // namespace sparkdoc::report
