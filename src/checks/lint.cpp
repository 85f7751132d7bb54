#include "checks/lint.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <tuple>

#include "checks/common.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

const std::vector<CheckInfo>& table() {
  static const std::vector<CheckInfo> kTable{
#define SPARKDOC_LINT(name) name(),
#include "checks/lint_list.h"
#undef SPARKDOC_LINT
  };
  return kTable;
}

bool ignored(const job::Job& job, const LintFinding& f) {
  for (const job::JobFile& file : job.files) {
    if (file.path != f.file) continue;
    auto it = file.ignored.find(f.line);
    if (it == file.ignored.end()) return false;
    return std::find(it->second.begin(), it->second.end(), f.id) != it->second.end();
  }
  return false;
}

// L10 before L2: by the number, not as text.
int id_number(std::string_view id) {
  int n = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9') break;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

void LintSink::add(Verdict verdict, const job::JobFile& file, uint32_t line, std::string detail) {
  findings_.push_back(LintFinding{std::string(id_), verdict, file.path, line, std::move(detail)});
}

std::span<const CheckInfo> all_lint_rules() {
  return table();
}

std::vector<LintFinding> run_lint(const job::Job& job, const LintContext& context,
                                  const std::vector<std::string>& only) {
  std::vector<LintFinding> out;
  for (const CheckInfo& rule : table()) {
    if (!id_wanted(rule.id, only) || rule.lint == nullptr) continue;
    LintSink sink;
    sink.set_rule(rule.id);
    try {
      rule.lint(job, context, sink);
    } catch (const std::exception& e) {
      sink.findings().clear();
      out.push_back(
          LintFinding{std::string(rule.id), Verdict::kFail, "", 0,
                      fmt::format("internal error in rule: {} (please report it)", e.what())});
      continue;
    }
    for (LintFinding& f : sink.findings()) {
      if (!ignored(job, f)) out.push_back(std::move(f));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const LintFinding& a, const LintFinding& b) {
    return std::make_tuple(a.file, a.line, id_number(a.id)) <
           std::make_tuple(b.file, b.line, id_number(b.id));
  });
  return out;
}

}  // namespace sparkdoc::checks
