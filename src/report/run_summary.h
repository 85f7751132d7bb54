// The run summary (facts/run_summary.h) for a person and for a machine: what `sparkdoc run`
// prints when the command ends and `sparkdoc report` prints without -o. Deterministic: a
// function of the summary alone.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "facts/run_summary.h"

namespace sparkdoc::report {

// Plain text, a line per fact, for a terminal. `events_shown` caps the event lines.
std::string render_run_summary_text(const facts::RunSummary& summary, size_t events_shown = 10);
// Every field, for machines. Numbers in SI units (bytes, seconds, W, C, MHz); missing ones null.
nlohmann::json render_run_summary_json(const facts::RunSummary& summary);

// Seconds since the run's origin as "1:02:03" or "12:34" (mm:ss under an hour).
std::string format_elapsed(double seconds);

}  // namespace sparkdoc::report
