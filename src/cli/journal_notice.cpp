#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "core/fs.h"
#include "tune/ownership.h"

namespace sparkdoc::cli {

void notice_unrestored_journal(const CLI::App& app) {
  std::string root_dir;
  auto chosen = app.get_subcommands();
  if (!chosen.empty()) {
    const CLI::App* cmd = chosen.front();
    if (cmd->get_name() == "clean" && cmd->count("--restore") > 0) return;
    // `run` restores an earlier run's journal itself, and says so.
    if (cmd->get_name() == "run") return;
    // --quiet prints nothing but errors (the watch sidecar of `run`, which journals itself).
    const CLI::Option* quiet = cmd->get_option_no_throw("--quiet");
    if (quiet != nullptr && quiet->count() > 0) return;
    // A test's fixture root holds its own journal; the machine's is not looked at then.
    const CLI::Option* root = cmd->get_option_no_throw("--root");
    if (root != nullptr && root->count() > 0 && !root->results().empty()) {
      root_dir = root->results().front();
    }
  }
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  auto line = tune::unrestored_journal_notice(
      root_dir.empty() ? Root() : Root(root_dir), static_cast<unsigned>(::geteuid()),
      xdg == nullptr ? "" : xdg, home == nullptr ? "" : home);
  if (line) std::cerr << *line << "\n";
}

}  // namespace sparkdoc::cli
