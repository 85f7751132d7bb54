// The preflight of `sparkdoc run`: the checks of `sparkdoc check` judge a snapshot taken with
// the environment the command will get (EnvPlan's entries as its environment), with the command
// itself as the workload (G10, S8), and the lint findings of the job it names. A FAIL stops the
// run unless forced.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "model/snapshot.h"

namespace sparkdoc::report {

// The verdict for the run log ("ready", "ready-with-warnings", "blocked (--force)"), or nullopt
// when the run must stop. Each FAIL line and the outcome go to `say`, one line each
// ("sparkdoc run: preflight: ready (2 warnings; ...)").
std::optional<std::string> judge_preflight(const Snapshot& snapshot,
                                           const std::vector<std::string>& command,
                                           std::vector<checks::Finding> job_findings, bool force,
                                           std::ostream& say);

}  // namespace sparkdoc::report
