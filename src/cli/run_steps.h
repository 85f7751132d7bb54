// The steps of `sparkdoc run` around run::supervise that need other components than run's:
// the environment line, the preflight (capture, lint and report/preflight.h) and the end (the
// run's summary, its report.html in the run folder). run_command.cpp parses the options and
// calls these in order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/capture_flags.h"
#include "run/environment.h"
#include "run/runner.h"

namespace sparkdoc::cli {

// "sparkdoc run: environment: removed ...; set ...; kept your ..." on stderr.
void say_environment(const run::EnvPlan& env);

// The check pipeline on this machine, with the environment the command will get, and the lint
// of the command line. Returns the verdict for the log, or nullopt when the run must stop (a
// FAIL without `force`; said on stderr).
std::optional<std::string> preflight(const CaptureFlags& capture,
                                     const std::vector<std::string>& command, bool force,
                                     const run::EnvPlan& env);

// Writes report.html into the run folder, whatever the command's exit (a failed run is the one
// most worth a look), then the summary: one JSON line on stdout with `json`, else the text on
// stderr once the command started. A page that cannot be written is said on stderr and costs
// nothing else.
void finish_run(const run::RunOutcome& outcome, bool json);

}  // namespace sparkdoc::cli
