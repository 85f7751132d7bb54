// `sparkdoc run`: start a training command with the recipes' launch rules and see it to its end.
//
// In order: the page-cache dropper, the vm tuning and the clock cap need root and are refused
// up front otherwise; vm values and the clock cap are journaled (tune) before they change
// (run/tuning.h); the watch sidecar
// (`sparkdoc watch --log DIR/watch.jsonl --interval S --quiet`) starts; the command starts
// (process.h) with the planned environment (environment.h), its I/O priority and OOM score; a
// "run_start" line goes to DIR/run.jsonl; during the load window the page cache is dropped every
// N seconds (load_window.h); signals sparkdoc receives are forwarded to the command's process
// group; when the command ends the dropper and the sidecar stop, every journaled value is
// written back (the clocks reset), and a "run_end" line closes the run log. The values are restored
// on every way out that runs code (normal end, a signal that ends the command, an error after the
// tuning); a SIGKILL of sparkdoc leaves the journal, which the next `sparkdoc run` restores first
// (restore_leftover_journal) and `sparkdoc clean --restore` can restore too.
//
// The log folder is made as log_folder.h says. The run log's lines are model/runlog.h's
// RunStart, CacheDrop, LoadWindowEnd and RunEnd, written by runlog/writer.h.
// Threading: one thread supervises; the dropper is a second thread that only drops caches,
// reads the watch log and appends cache_drop lines (each line one write(2) on an O_APPEND file).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/runlog.h"
#include "run/environment.h"
#include "run/process.h"
#include "tune/clock_cap.h"

namespace sparkdoc::run {

// The seed's launch: `ionice -c 2 -n 7 docker run ... --oom-score-adj 300` (000 §6 step 6): the
// kernel's OOM killer picks the training run before the desktop and sparkdoc.
inline constexpr int kDefaultOomScoreAdj = 300;
// 000 §7: make_cache_dropper(interval=20.0); the load window lasts about six minutes there, so
// ten is the default limit.
inline constexpr double kDefaultDropEveryS = 20;
inline constexpr double kDefaultDropForS = 600;

// A journal an earlier sparkdoc left behind (it was killed before its exit path ran): what was
// found and done, as lines for stderr.
struct LeftoverJournal {
  bool found = false;
  bool restored = false;  // every value back and the journal removed
  std::vector<std::string> lines;
};

// Restores it when this process may (root) and no other sparkdoc holds it; otherwise says why
// not and how. Nothing found: found == false and no lines.
LeftoverJournal restore_leftover_journal(const Root& root, unsigned euid,
                                         std::string_view xdg_state_home, std::string_view home);

struct RunOptions {
  std::vector<std::string> argv;
  EnvPlan env;
  bool distributed = false;
  std::optional<int> oom_score_adj = kDefaultOomScoreAdj;
  bool low_io_priority = true;
  // --log-dir; empty: a new folder in sparkdoc-runs (log_folder.h says which folders are taken).
  // run.jsonl, watch.jsonl and watch.err are made new in it.
  std::string log_dir;

  // Telemetry. watch_unavailable non-empty: no sidecar, and this says why.
  bool watch = true;
  std::string watch_exe = "/proc/self/exe";  // absolute: the sidecar works in the log folder
  std::string watch_unavailable;
  double watch_interval_s = 1.0;

  // Machine tuning (root): vm values for the load window, the GPU clock cap, and page-cache
  // drops.
  bool tune_vm = false;
  std::optional<tune::ClockCap> cap_clocks;
  std::optional<double> drop_every_s;
  double drop_for_s = kDefaultDropForS;
  Root root;
  unsigned euid = 0;
  std::string xdg_state_home;
  std::string home;

  std::string preflight;     // the preflight's verdict, for the log
  std::string command_text;  // the journal session's command
};

struct RunOutcome {
  int exit_status = 0;   // the command's, as a shell reports it
  bool started = false;  // false: exec failed, or a signal came before the start
  std::string log_dir;   // the folder the logs went to
  runlog::RunLog log;    // both files read back at the end (runlog::read_log)
};

// Runs the command to its end. `say` gets sparkdoc's own notices (one line each, "sparkdoc
// run: ...", the log's path first). Errors: nothing was started (the log folder cannot be made
// or is refused, the journal or a vm value cannot be written); whatever was changed before the
// error is restored.
Result<RunOutcome> supervise(const RunOptions& options, SignalGate& gate, std::ostream& say);

}  // namespace sparkdoc::run
