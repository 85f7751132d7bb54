#include "cli/lint_job.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <iostream>

#include "checks/lint.h"
#include "cli/progress.h"
#include "core/strings.h"
#include "job/read.h"
#include "report/lint.h"

namespace sparkdoc::cli {

Result<job::Job> read_lint_job(const std::vector<std::string>& paths,
                               const std::vector<std::string>& commands) {
  job::Job job;
  if (!paths.empty()) {
    ProgressLine progress(std::chrono::seconds(1));
    job::JobReadOptions options;
    if (progress.enabled()) {
      options.progress = [&progress](size_t done, size_t total) {
        progress.show(fmt::format("lint: reading {}/{} files", done, total));
      };
    }
    auto read = job::read_job(paths, options);
    progress.clear();
    if (!read) return tl::unexpected(read.error());
    job = std::move(*read);
  }
  for (const std::string& c : commands) job.files.push_back(job::command_line_file(c));
  return job;
}

std::vector<std::string> launch_files(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string path = argv[i];
    if (path.starts_with("--config_file=") || path.starts_with("--config-file=")) {
      path = path.substr(path.find('=') + 1);
    }
    if (path.empty() || path.starts_with("-")) continue;
    const size_t slash = path.find_last_of('/');
    if (!job::classify_job_file(slash == std::string::npos ? path : path.substr(slash + 1))) {
      continue;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
  }
  return out;
}

std::vector<checks::Finding> lint_for_check(const job::Job& job, bool spark, std::string_view who) {
  for (const std::string& s : job.skipped) std::cerr << who << ": not read: " << s << "\n";
  checks::LintContext context;
  context.spark = spark;
  return report::lint_check_findings(checks::run_lint(job, context));
}

std::vector<checks::Finding> lint_launch(const std::vector<std::string>& argv, bool spark,
                                         std::string_view who) {
  // launch_files names only files that exist, so reading them fails only on a race.
  auto job = read_lint_job(launch_files(argv), {join(argv, " ")});
  if (!job) {
    std::cerr << who << ": " << job.error().message << "\n";
    return {};
  }
  return lint_for_check(*job, spark, who);
}

}  // namespace sparkdoc::cli
