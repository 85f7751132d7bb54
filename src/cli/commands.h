// Subcommands of the sparkdoc binary. Each registers its options on a CLI11 app and returns
// the process exit status when run: 0 ready, 1 blocked, 2 usage or internal error.
#pragma once

#include <functional>

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

// Prints one line to stderr when an earlier run's journal was never restored (tune's
// unrestored_journal_notice), looking under the chosen subcommand's --root when it has one.
// Not for `clean --restore`, which is the cure.
void notice_unrestored_journal(const CLI::App& app);

}  // namespace sparkdoc::cli
