// Whose values an unrestored journal holds, for a start that finds one: `sparkdoc run`
// restores a killed run's values before anything else, and every other command says in one
// line what the journal means. The writer and the command are looked up in the live /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tune/journal.h"

namespace sparkdoc::tune {

enum class JournalHolder {
  // `sparkdoc clean --yes --tune-vm` set them for the model load that follows (000 §6), on
  // purpose; `sparkdoc clean --restore` after training puts them back.
  kClean,
  // The sparkdoc that wrote the latest session still runs: the values are its to restore.
  kWriterRunning,
  // That sparkdoc was killed, but the command it started still runs in its own process group:
  // the values were set for that command.
  kCommandRunning,
  // Nobody: a killed run's leftovers, to restore.
  kNobody,
};

struct JournalOwnership {
  JournalHolder holder = JournalHolder::kNobody;
  JournalSession session;  // the clean's session for kClean, else the latest session
};

// In this order: any session not written by `run` (a clean's), the latest session's writer
// still running, its command still running, else nobody. A journal without sessions is
// nobody's.
JournalOwnership journal_ownership(const JournalContents& contents);

// Whether `pid` is a live sparkdoc process other than this one (its name checked, so a reused
// pid does not count).
bool sparkdoc_running(int64_t pid);

// Whether the process `pid` that started `start_ticks` after boot still runs: not a reused
// pid (another start time), not a zombie (dead, not yet reaped). False when start_ticks is 0.
bool running_since(int64_t pid, uint64_t start_ticks);

// One line for stderr when a journal is there that a person should know of, else nullopt.
// Each location is lstat(2)ed; a journal found is read (a few hundred bytes) when this user
// may, and judged by journal_ownership:
//   kWriterRunning   nothing: the running sparkdoc restores its values when it ends
//   kCommandRunning  "sparkdoc: values changed by a killed `sparkdoc run` (pid N) stay for the
//                    command it started (NAME, pid M), which still runs (journal PATH); `sudo
//                    sparkdoc clean --restore` puts them back"
//   kClean           "sparkdoc: values set by `sparkdoc clean ...` for the model load are still
//                    in place (journal PATH, last written DATE UTC); after training, `sparkdoc
//                    clean --restore` puts them back" ("the GPU clock cap and the values set
//                    by ... are still in place" when it capped the clocks)
//   kNobody, or a journal this user cannot read or parse:
//                    "sparkdoc: values changed by an earlier run were not restored (journal
//                    PATH, last written DATE UTC); run `sparkdoc clean --restore`"
std::optional<std::string> unrestored_journal_notice(const Root& root, unsigned euid,
                                                     std::string_view xdg_state_home,
                                                     std::string_view home);

}  // namespace sparkdoc::tune
