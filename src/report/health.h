// One line for the health checks that schedulers already run: Slurm's HealthCheckProgram and
// Prolog (any non-zero exit drains the node; the program may set the drain reason itself with
// scontrol), LBNL NHC (the same convention), and Kubernetes node-problem-detector's custom
// plugins (exit 0 OK, 1 a problem, anything else unknown; stdout, cut at the plugin's
// max_output_length, 80 by default, is the condition's message).
//
// The line puts what a person needs first, so that any cut keeps it: "G1 FAIL: ..." or
// "sparkdoc OK: ...". It is printable ASCII on one line and at most kHealthLineMax bytes:
// scontrol takes Reason= as one argument, Slurm refuses strings over 1024 bytes, and
// `sinfo -R` shows the first 20 characters unless asked for more.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"

namespace sparkdoc::report {

inline constexpr size_t kHealthLineMax = 200;

// The checks whose verdict follows what runs on the node now rather than the node itself:
// memory headroom (G3), other GPU processes (G6), memory no live process holds (S10) and
// /dev/shm in use (F6). A health check that finds a job on the GPU leaves them out, so that a
// running job does not drain its own node; between jobs (a Prolog) they are judged.
bool momentary_check(std::string_view id);

struct HealthLine {
  bool healthy = true;  // no FAIL (and, with strict, no WARN)
  std::string line;     // what to print, and the drain reason
};
// `left_out` names checks not judged and why ("G3, G6, S10, F6 left out: 1 GPU process running").
HealthLine render_health_line(const std::vector<checks::Finding>& findings, bool strict,
                              std::string_view left_out = {});

// Text made fit for the line: printable ASCII (other bytes and UTF-8 sequences become "?"), one
// line, cut at `max` bytes with "..." when longer.
std::string health_text(std::string_view text, size_t max);

}  // namespace sparkdoc::report
