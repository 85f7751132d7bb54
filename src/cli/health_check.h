// `sparkdoc check --health-check`: the one line and exit status that Slurm, NHC and
// node-problem-detector expect (report/health.h renders the line), and --drain's scontrol call.
#pragma once

#include "model/snapshot.h"
#include "report/report.h"

namespace sparkdoc::cli {

// Prints the line and returns the exit status (0 healthy, 1 not). A compute process on the GPU
// (a job) leaves G3, G6, S10 and F6 out of `rep`'s findings; with `drain`, an unhealthy node is
// drained through scontrol with the line as its reason.
int print_health(report::CheckReport& rep, const Snapshot& snapshot, bool strict, bool drain);

}  // namespace sparkdoc::cli
