// run/runner.h: a journal an earlier sparkdoc left behind, found and restored (or left, and
// why) before a run changes anything.
#include <fmt/format.h>

#include <string>

#include "core/fs.h"
#include "run/runner.h"
#include "tune/journal.h"
#include "tune/ownership.h"
#include "tune/swap.h"
#include "tune/tunables.h"

namespace sparkdoc::run {

LeftoverJournal restore_leftover_journal(const Root& root, unsigned euid,
                                         std::string_view xdg_state_home, std::string_view home) {
  LeftoverJournal out;
  auto found = tune::existing_journal(root, euid, xdg_state_home, home);
  if (!found) return out;
  out.found = true;
  std::string who = "an earlier sparkdoc";
  tune::JournalOwnership owner;
  if (auto text = read_text(found->path, tune::kJournalMaxBytes)) {
    if (auto parsed = tune::parse_journal(*text); parsed && !parsed->sessions.empty()) {
      owner = tune::journal_ownership(*parsed);
      who = fmt::format("an earlier sparkdoc (pid {}, `{}`, started {})", owner.session.pid,
                        owner.session.command, owner.session.started_at);
    }
  }
  const tune::JournalSession& session = owner.session;
  switch (owner.holder) {
    case tune::JournalHolder::kClean:
      // `sparkdoc clean --yes --tune-vm` leaves its values changed on purpose, for the load
      // that follows: they are not a killed run's leftovers.
      out.lines.push_back(fmt::format(
          "sparkdoc run: values changed by `sparkdoc {}` (pid {}, started {}; journal {}) stay "
          "changed for this run, as it meant; `sparkdoc clean --restore` puts them back",
          session.command, session.pid, session.started_at, found->machine_path));
      return out;
    case tune::JournalHolder::kWriterRunning:
      out.lines.push_back(fmt::format(
          "sparkdoc run: journal {} belongs to sparkdoc pid {}, which is still running; its "
          "values stay until it ends",
          found->machine_path, session.pid));
      return out;
    case tune::JournalHolder::kCommandRunning:
      // A killed run's command runs on in its own process group; the values were set for it.
      out.lines.push_back(fmt::format(
          "sparkdoc run: {} was killed, but the command it started ({}, pid {}) still runs: the "
          "values it changed stay for that command (journal {}). The next `sparkdoc run` after "
          "it ends restores them, or `sudo sparkdoc clean --restore` now",
          who, session.command_name, session.command_pid, found->machine_path));
      return out;
    case tune::JournalHolder::kNobody:
      break;
  }
  if (auto problem = tune::privilege_problem(euid)) {
    out.lines.push_back(fmt::format(
        "sparkdoc run: {} changed kernel values or GPU clocks and did not restore them (journal "
        "{}); {}: run "
        "`sudo sparkdoc clean --restore`, or `sudo sparkdoc run ...`, which restores them first",
        who, found->machine_path, *problem));
    return out;
  }
  tune::KernelSwap swap(root);
  auto report = tune::restore_journal(*found, root, euid, swap);
  if (!report) {
    out.lines.push_back(fmt::format("sparkdoc run: journal {} left by {} was not restored: {}",
                                    found->path, who, report.error().message));
    return out;
  }
  out.lines.push_back(fmt::format(
      "sparkdoc run: {} ended without restoring what it changed: it was killed before its exit "
      "path ran (SIGKILL, the OOM killer, a power loss). Restoring from its journal {}:",
      who, found->path));
  for (const auto& v : report->values) {
    out.lines.push_back(v.restored ? fmt::format("  restored {} {} -> {}", v.path,
                                                 v.before.value_or("?"), v.original)
                                   : fmt::format("  NOT restored {}: {}", v.path, v.error));
  }
  for (const auto& s : report->swaps) {
    out.lines.push_back(s.was_on     ? fmt::format("  swap {} is on", s.path)
                        : s.restored ? fmt::format("  swap {} turned on again", s.path)
                                     : fmt::format("  swap {} NOT turned on: {}", s.path, s.error));
  }
  for (const auto& c : report->gpu_clocks) {
    out.lines.push_back(c.restored
                            ? fmt::format("  clocks of {} reset to the driver's default", c.uuid)
                            : fmt::format("  clocks of {} NOT reset: {}", c.uuid, c.error));
  }
  for (const auto& p : report->problems) out.lines.push_back("  problem: " + p);
  out.restored = report->complete();
  out.lines.push_back(report->removed ? std::string("  every value restored; journal removed")
                                      : fmt::format("  journal kept at {}; see `sparkdoc clean "
                                                    "--restore`",
                                                    found->path));
  return out;
}

}  // namespace sparkdoc::run
