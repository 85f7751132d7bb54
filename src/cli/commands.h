// Subcommands of the sparkdoc binary. Each registers its options on a CLI11 app and returns
// the process exit status when run: 0 ready, 1 blocked, 2 usage or internal error.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace sparkdoc::cli {

inline constexpr int kExitReady = 0;
inline constexpr int kExitBlocked = 1;
inline constexpr int kExitUsage = 2;

// Each returns the function to call when its subcommand was chosen.
std::function<int()> add_check_command(CLI::App& app);
std::function<int()> add_explain_command(CLI::App& app);
std::function<int()> add_snapshot_command(CLI::App& app);
std::function<int()> add_mem_command(CLI::App& app);
std::function<int()> add_clean_command(CLI::App& app);
std::function<int()> add_audit_command(CLI::App& app);
std::function<int()> add_plan_command(CLI::App& app);
std::function<int()> add_load_command(CLI::App& app);
std::function<int()> add_bw_command(CLI::App& app);
std::function<int()> add_watch_command(CLI::App& app);
std::function<int()> add_run_command(CLI::App& app);
std::function<int()> add_report_command(CLI::App& app);
std::function<int()> add_lint_command(CLI::App& app);
std::function<int()> add_compare_command(CLI::App& app);

// One row per command, in the order `sparkdoc --help` lists them: main registers, lists and
// dispatches from this table alone. `add` registers the subcommand `name` (with its long
// description, shown by `sparkdoc help NAME`).
struct Command {
  std::string_view name;
  std::string_view summary;  // one line, for the list in `sparkdoc --help`
  std::function<int()> (*add)(CLI::App& app);
  // Commands whose threads move data (load, bw) keep glibc's default malloc arenas.
  bool keeps_malloc_arenas = false;
};

inline constexpr Command kCommands[] = {
    {"check", "Preflight G1-G10 and the recipe checks (the default command)", add_check_command},
    {"explain", "What a check or a symptom means, its cause and its fix", add_explain_command},
    {"snapshot", "Record every reading to JSON; --diff two of them (compare's rows, or --readings)",
     add_snapshot_command},
    {"mem", "Unified-memory accounting: what holds the memory, what is reclaimable, orphans",
     add_mem_command},
    {"clean", "The pre-run cleanup sequence (000 §6), dry run unless --yes", add_clean_command},
    {"audit", "CUDA ABI and GPU-architecture audit of a Python environment's native code",
     add_audit_command},
    {"plan", "Will this model and method fit; exact parameter counts", add_plan_command},
    {"load", "Load a checkpoint to the GPU with bounded host memory; benchmark it",
     add_load_command, true},
    {"bw", "Measure memory bandwidth (G5)", add_bw_command, true},
    {"watch", "Telemetry with detectors, a log file, a Prometheus endpoint", add_watch_command},
    {"run", "Launch a training command with a clean environment, tuning, watch and summary",
     add_run_command},
    {"report", "Turn a run log into a summary or a self-contained HTML page", add_report_command},
    {"lint", "Judge the training job: scripts, container recipes, launch lines, lockfiles, builds",
     add_lint_command},
    {"compare", "Name every difference between node snapshots that breaks a multi-node job",
     add_compare_command},
};

// `sparkdoc compare PATHS` (files, folders, "-"), its text or JSON on stdout and its exit
// status; `command` names the command in its error lines ("compare", "snapshot --diff").
int compare_snapshots(const std::vector<std::string>& paths, bool json, bool all,
                      std::string_view command);

// Writes an HTML page that `--html FILE` asked for (core/fs.h write_file) and says so on stderr
// ("sparkdoc mem: wrote FILE (12 KB)"); false, with the reason said, when it cannot.
bool write_html_page(std::string_view command, const std::string& path, const std::string& html);

// Prints one line to stderr when an earlier run's journal was never restored (tune's
// unrestored_journal_notice), looking under the chosen subcommand's --root when it has one.
// Not for `clean --restore`, which is the cure.
void notice_unrestored_journal(const CLI::App& app);

}  // namespace sparkdoc::cli
