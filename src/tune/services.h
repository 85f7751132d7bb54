// Stopping a known desktop service that holds GPU memory, the one thing `sparkdoc clean
// --stop-known` does to processes (000 §6 step 1: "systemctl --user stop
// gnome-remote-desktop.service", which "holds ~6 GB HBM CUDA context").
//
// Programs run by fork and execve with a fixed argument list, never a shell. The program is
// looked up on PATH before the fork: after fork(2) in a process with threads (NVML starts
// some) only async-signal-safe calls are allowed, and execvp's PATH search is not one of them.
// Threading: run_program blocks its caller until the child ends or the timeout kills it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::tune {

// The system user GNOME 46 runs its remote-login daemon as (the system unit of the same name).
inline constexpr std::string_view kRemoteDesktopSystemUser = "gnome-remote-desktop";
inline constexpr std::string_view kRemoteDesktopUnit = "gnome-remote-desktop.service";

// The systemctl command that stops `unit` for the session its process belongs to:
//   owned by the caller      systemctl --user stop UNIT               (the seed's line)
//   owned by the system user systemctl stop UNIT                      (the system unit)
//   owned by another user    systemctl --user --machine=USER@ stop UNIT
// Run as root (`sparkdoc clean --yes` needs it) a plain --user would talk to root's own
// service manager, not to the desktop user's. Pure.
std::vector<std::string> stop_unit_argv(std::string_view unit, unsigned owner_uid,
                                        std::string_view owner_name, unsigned euid);

// Owner of <root>/proc/PID (the process's real uid), and that uid's user name.
Result<unsigned> process_owner(const Root& root, int pid);
Result<std::string> user_name(unsigned uid);

struct ProgramOutcome {
  int exit_status = -1;    // the child's exit status; -1 when it died of a signal
  bool timed_out = false;  // killed after the timeout
  std::string output;      // stdout and stderr together, the first 4 KiB
};

// The executable `name` resolves to on `path_env` (colon-separated; empty entries mean the
// current folder, as execvp takes them); a name with a '/' is taken as it is. Absent when no
// entry holds an executable regular file of that name.
Result<std::string> find_program(std::string_view name, std::string_view path_env);

// Runs argv[0] (a path from find_program) with argv, stdin from /dev/null, stdout and stderr
// captured, for at most `timeout`; then SIGKILL. Errors only when the child cannot be started.
Result<ProgramOutcome> run_program(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout);

}  // namespace sparkdoc::tune
