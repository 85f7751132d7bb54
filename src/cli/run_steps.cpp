#include "cli/run_steps.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/lint_job.h"
#include "core/fs.h"
#include "core/strings.h"
#include "facts/platform.h"
#include "facts/run_summary.h"
#include "report/preflight.h"
#include "report/run_page.h"
#include "report/run_summary.h"

namespace sparkdoc::cli {
namespace {

// The page `sparkdoc report LOG_DIR -o FILE` writes, as report.html in the run folder. Returns
// its path, or "" when it could not be written (said on stderr; the run's exit status is the
// command's).
std::string write_run_page(const run::RunOutcome& outcome, const facts::RunSummary& summary) {
  if (outcome.log_dir.empty()) return "";
  report::RunPageOptions options;
  std::string dir = outcome.log_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  options.source = dir.substr(dir.find_last_of('/') + 1);
  std::string path = dir + "/report.html";
  if (auto written = write_file(path, report::render_run_page(outcome.log, summary, options));
      !written) {
    std::cerr << "sparkdoc run: report.html not written: " << written.error().message << "\n";
    return "";
  }
  return path;
}

}  // namespace

void say_environment(const run::EnvPlan& env) {
  std::vector<std::string> set;
  for (const auto& [k, v] : env.set) set.push_back(k + "=" + v);
  std::string line = "sparkdoc run: environment:";
  line += env.removed.empty() ? " nothing removed" : " removed " + join(env.removed, " ");
  if (!set.empty()) line += "; set " + join(set, " ");
  if (!env.kept.empty()) line += "; kept your " + join(env.kept, " ");
  std::cerr << line << "\n";
}

std::optional<std::string> preflight(const CaptureFlags& capture,
                                     const std::vector<std::string>& command, bool force,
                                     const run::EnvPlan& env) {
  std::vector<char*> envp;
  for (const auto& e : env.entries) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  CaptureOptions options = capture.options();
  options.envp = envp.data();
  Snapshot snapshot = capture_live(std::move(options), "run");
  const bool spark = facts::classify_platform(snapshot).kind == facts::PlatformKind::kDgxSpark;
  return report::judge_preflight(
      snapshot, command, lint_launch(command, spark, "sparkdoc run: lint"), force, std::cerr);
}

void finish_run(const run::RunOutcome& outcome, bool json) {
  facts::RunSummary summary = facts::summarize_run(outcome.log);
  std::string page = write_run_page(outcome, summary);
  if (json) {
    nlohmann::json j = report::render_run_summary_json(summary);
    j["log_dir"] = outcome.log_dir;
    j["report"] = page;
    j["exit_status"] = outcome.exit_status;
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (outcome.started) {
    std::cerr << report::render_run_summary_text(summary);
    std::cerr << fmt::format("  {:<12} {}/\n", "log", outcome.log_dir);
    if (!page.empty()) std::cerr << fmt::format("  {:<12} {}\n", "report", page);
  }
}

}  // namespace sparkdoc::cli
