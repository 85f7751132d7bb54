// The job lint reads for `sparkdoc lint`, `check --lint` and `run`'s pre-launch lint: the paths
// and --cmd lines given, or the files a launch command names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "core/result.h"
#include "model/job.h"

namespace sparkdoc::cli {

// Reads the paths (files or folders) and command lines, with a progress line on stderr once it
// has taken a second. Errors name the path that does not exist or cannot be listed.
Result<job::Job> read_lint_job(const std::vector<std::string>& paths,
                               const std::vector<std::string>& commands);

// The files a launch command names that lint reads: each argument that is a regular file of a
// kind lint knows by its name (train.py, run.sh, accelerate_config.yaml, and the value of
// --config_file=...), as written.
std::vector<std::string> launch_files(const std::vector<std::string>& argv);

// Lints the job for the check report: each finding as a check line ("L3", "train.py:36: ...").
// A file it found and could not read is said on stderr under `who` ("sparkdoc check: --lint:
// not read: train.py: ..."), so that no file drops out of the judgement unsaid.
std::vector<checks::Finding> lint_for_check(const job::Job& job, bool spark, std::string_view who);

// run's pre-launch lint: the files a launch command names (launch_files) and the command line
// itself, as check lines.
std::vector<checks::Finding> lint_launch(const std::vector<std::string>& argv, bool spark,
                                         std::string_view who);

}  // namespace sparkdoc::cli
