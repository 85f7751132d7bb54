#include "checks/lint.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <tuple>

#include "checks/common.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

const std::vector<CheckInfo>& rule_table() {
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
  return rule_table();
}

std::vector<LintFinding> run_lint(const job::Job& job, const LintContext& context,
                                  const std::vector<std::string>& only) {
  std::vector<const CheckInfo*> rules;
  for (const CheckInfo& rule : rule_table()) {
    if (id_wanted(rule.id, only) && rule.lint != nullptr) rules.push_back(&rule);
  }
  // Rules are pure and independent: on a large job (a whole site-packages) they run side by side,
  // each into its own sink, and are merged in table order, so the result does not depend on it.
  std::vector<std::vector<LintFinding>> found(rules.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < rules.size(); i = next++) {
      const CheckInfo& rule = *rules[i];
      LintSink sink;
      sink.set_rule(rule.id);
      try {
        rule.lint(job, context, sink);
        found[i] = std::move(sink.findings());
      } catch (const std::exception& e) {
        found[i] = {LintFinding{std::string(rule.id), Verdict::kFail, "", 0,
                                fmt::format("internal error in rule: {} (please report it)",
                                            e.what())}};
      }
    }
  };
  const unsigned threads =
      job.files.size() < 64 ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<LintFinding> out;
  for (std::vector<LintFinding>& rule_findings : found) {
    for (LintFinding& f : rule_findings) {
      if (f.file.empty() || !ignored(job, f)) out.push_back(std::move(f));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const LintFinding& a, const LintFinding& b) {
    return std::make_tuple(a.file, a.line, id_number(a.id)) <
           std::make_tuple(b.file, b.line, id_number(b.id));
  });
  return out;
}

}  // namespace sparkdoc::checks
