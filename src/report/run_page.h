// `sparkdoc report`: a run log as one self-contained HTML page. Everything is inline (SVG charts
// drawn here, CSS in a <style> block, no script, no font or image fetched), so the page opens
// offline, attaches to a bug report, and renders the same in any browser.
//
// Charts over elapsed time: GPU power (with the power limit; on a DGX Spark, whose GB10 reports
// none, the ~100 W sustained cap of 002 G4), GPU temperature, SM clock, host memory (available,
// page cache as facts::page_cache_bytes counts it, anonymous, swap), GPU memory per process
// (with the device total when the GPU reports one) and, when the log has them, memory pressure
// (PSI). Every chart
// carries the log's events as vertical markers (warn red, info blue; hover for the message);
// the host-memory chart also marks the page-cache drops of `sparkdoc run`. A missing value
// breaks a line instead of drawing it through zero; a chart with no readings says so.
//
// Deterministic: the page is a function of the log alone (no clock, no host lookups), with
// fixed number formats, so golden files compare byte for byte. Long logs are thinned per pixel
// column to the minimum and maximum of each column, so peaks survive and the page stays small.
#pragma once

#include <string>
#include <string_view>

#include "facts/run_summary.h"
#include "model/runlog.h"

namespace sparkdoc::report {

struct RunPageOptions {
  std::string title = "sparkdoc run report";
  std::string source;  // the log's name as given on the command line, shown in the footer
};

std::string render_run_page(const runlog::RunLog& log, const facts::RunSummary& summary,
                            const RunPageOptions& options);

}  // namespace sparkdoc::report
