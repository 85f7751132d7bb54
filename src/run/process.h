// Starting and watching the command of `sparkdoc run`, without a shell: fork, then exec of the
// argument vector as given (PATH searched for a bare name, as execvp does).
//
// Signals: a SignalGate blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD and SIGTTOU in the
// thread that makes it, and in every thread started after it; the supervisor takes them one at
// a time with wait() (sigtimedwait), so nothing runs in a signal handler and nothing is lost
// between a check and a wait. The gate also ignores SIGPIPE, for the rest of the process: with
// stdout or stderr a pipe whose reader has gone (`sparkdoc run ... | head`), a write fails
// instead of killing the supervisor between the tuning and its restore, and the command's exit
// status stays sparkdoc's. The command gets the mask sparkdoc had before the gate and the
// default dispositions of the forwarded signals and of SIGPIPE.
//
// The command runs in a process group of its own (setpgid in both processes, so neither can
// race the other), so that a forwarded signal reaches everything it started (DataLoader workers,
// tokenizer pools). When sparkdoc's standard input is its controlling terminal and sparkdoc is
// in the foreground, that group is given the terminal (tcsetpgrp), as a shell does for a job:
// keys like Ctrl-C then reach the command directly, and the command can read the terminal.
//
// The command is held on a pipe after fork until the parent has applied its I/O priority and
// OOM score, so they hold from its first instruction and are inherited by everything it starts.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace sparkdoc::run {

inline constexpr std::array<int, 4> kForwardedSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// "SIGTERM" for 15; "signal 42" for a number without a name here.
std::string signal_name(int signal);

class SignalGate {
 public:
  SignalGate();
  ~SignalGate();
  SignalGate(const SignalGate&) = delete;
  SignalGate& operator=(const SignalGate&) = delete;

  // The mask to give started processes: the one in force before the gate.
  const sigset_t& outside_mask() const { return old_; }
  // One of the gate's signals, waiting up to `timeout`; 0 when none came.
  int wait(std::chrono::milliseconds timeout);
  // A forwarded signal that arrived and was not taken yet (consumed), or 0.
  int take_pending_forwarded();

 private:
  sigset_t set_{};
  sigset_t old_{};
};

struct ChildSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;      // "NAME=value"
  std::optional<int> oom_score_adj;  // written to /proc/PID/oom_score_adj
  bool low_io_priority = true;       // best-effort class, level 7 (ionice -c 2 -n 7)
  bool take_terminal = false;        // give the command's group the controlling terminal
};

// Why exec failed: the command never ran. exit_status is what a shell reports (127: not found,
// 126: found but not runnable).
struct ExecFailure {
  int exit_status = 127;
  std::string message;  // "python3: No such file or directory"
};

struct StartedChild {
  pid_t pid = -1;  // also the process group id; -1 when exec failed (the child is reaped)
  std::optional<ExecFailure> exec_failed;
  std::string io_priority;            // "best-effort 7", "not set (--no-ionice)", or why it failed
  std::optional<int> oom_score_adj;   // when it was set
  std::vector<std::string> warnings;  // settings that could not be applied; the command runs
  bool has_terminal = false;
};

// Starts the command. Errors: an empty argument vector, fork or pipe failures (nothing
// started). A command that cannot be executed is a StartedChild with exec_failed set.
Result<StartedChild> start_child(const ChildSpec& spec, const sigset_t& child_mask);

// Whether a process group still has members (kill(-pgid, 0)).
bool group_alive(pid_t pgid);

// Gives the terminal on standard input to the process group `pgid` (sparkdoc's own to take it
// back). SIGTTOU must be blocked (the gate does). Returns false when it did not.
bool give_terminal(pid_t pgid);

struct SidecarSpec {
  std::string exe;                // "/proc/self/exe" for sparkdoc itself; an absolute path
  std::vector<std::string> args;  // without argv[0]
  // An open folder to work in (fchdir): relative paths in args name files there.
  int cwd_fd = -1;
  // Its standard error (the caller keeps and closes it); stdin and stdout are /dev/null.
  int stderr_fd = -1;
};

// Starts a helper in its own process group that ends with sparkdoc (PR_SET_PDEATHSIG, SIGTERM).
Result<pid_t> start_sidecar(const SidecarSpec& spec, const sigset_t& child_mask);

struct ExitInfo {
  int status = 0;  // as a shell reports it: code, or 128 + signal
  std::optional<int> code;
  std::optional<int> signal;
  bool core_dumped = false;
};
// A waitpid(2) status of a process that ended.
ExitInfo decode_exit(int wait_status);

// ioprio_set(2) value of the best-effort class at `level` (0 highest, 7 lowest).
int best_effort_io_priority(int level);

}  // namespace sparkdoc::run
