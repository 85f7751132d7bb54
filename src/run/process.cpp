#include "run/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <string.h>  // sigabbrev_np
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace sparkdoc::run {
namespace {

// linux/ioprio.h: the class sits above 13 bits of data.
constexpr int kIoprioClassShift = 13;
constexpr int kIoprioClassBestEffort = 2;
constexpr int kIoprioWhoProcess = 1;

// argv/envp as the exec family takes them; built before fork, so the child does not allocate.
class CStrings {
 public:
  explicit CStrings(const std::vector<std::string>& items) {
    for (const auto& s : items) ptrs_.push_back(const_cast<char*>(s.c_str()));
    ptrs_.push_back(nullptr);
  }
  char** data() { return ptrs_.data(); }

 private:
  std::vector<char*> ptrs_;
};

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads up to `size` bytes; fewer at end of file.
size_t read_full(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

void default_dispositions() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : kForwardedSignals) ::sigaction(sig, &sa, nullptr);
  ::sigaction(SIGCHLD, &sa, nullptr);
  ::sigaction(SIGTTOU, &sa, nullptr);
  ::sigaction(SIGPIPE, &sa, nullptr);
}

struct Pipe {
  int fd[2] = {-1, -1};
  bool open() { return ::pipe2(fd, O_CLOEXEC) == 0; }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
};

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  if (abbrev == nullptr) return fmt::format("signal {}", signal);
  return std::string("SIG") + abbrev;
}

SignalGate::SignalGate() {
  ::sigemptyset(&set_);
  for (int sig : kForwardedSignals) ::sigaddset(&set_, sig);
  ::sigaddset(&set_, SIGCHLD);
  ::sigaddset(&set_, SIGTTOU);
  ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  // Not restored by the destructor: the summary and the exit-time flush of stdout come after
  // the gate, and a closed pipe there must not turn the command's status into 141.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

SignalGate::~SignalGate() {
  // Forwarded signals still pending are for a command that has ended; they are dropped rather
  // than delivered to sparkdoc on its way out.
  sigset_t pending;
  ::sigpending(&pending);
  timespec zero{};
  while (true) {
    sigset_t take;
    ::sigemptyset(&take);
    bool any = false;
    for (int sig : kForwardedSignals) {
      if (::sigismember(&pending, sig)) {
        ::sigaddset(&take, sig);
        any = true;
      }
    }
    if (!any || ::sigtimedwait(&take, nullptr, &zero) <= 0) break;
    ::sigpending(&pending);
  }
  ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

int SignalGate::wait(std::chrono::milliseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  for (;;) {
    int sig = ::sigtimedwait(&set_, nullptr, &ts);
    if (sig > 0) return sig;
    if (errno == EINTR) continue;
    return 0;
  }
}

int SignalGate::take_pending_forwarded() {
  sigset_t pending;
  if (::sigpending(&pending) != 0) return 0;
  for (int sig : kForwardedSignals) {
    if (::sigismember(&pending, sig)) {
      sigset_t one;
      ::sigemptyset(&one);
      ::sigaddset(&one, sig);
      timespec zero{};
      if (::sigtimedwait(&one, nullptr, &zero) == sig) return sig;
    }
  }
  return 0;
}

int best_effort_io_priority(int level) {
  return (kIoprioClassBestEffort << kIoprioClassShift) | level;
}

bool group_alive(pid_t pgid) {
  return pgid > 0 && ::kill(-pgid, 0) == 0;
}

bool give_terminal(pid_t pgid) {
  return ::tcsetpgrp(STDIN_FILENO, pgid) == 0;
}

Result<StartedChild> start_child(const ChildSpec& spec, const sigset_t& child_mask) {
  if (spec.argv.empty() || spec.argv.front().empty()) return fail("no command to run");
  CStrings argv(spec.argv);
  CStrings envp(spec.env);
  Pipe go;
  Pipe report;
  if (!go.open() || !report.open()) return fail(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) return fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    default_dispositions();
    ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    ::close(go.fd[1]);
    ::close(report.fd[0]);
    char c = 0;
    // The parent closes its end without a byte when it gives up before the start.
    if (read_full(go.fd[0], &c, 1) != 1) ::_exit(126);
    ::execvpe(argv.data()[0], argv.data(), envp.data());
    int err = errno;
    write_all(report.fd[1], &err, sizeof err);
    ::_exit(err == ENOENT ? 127 : 126);
  }
  go.close_end(0);
  report.close_end(1);
  // Also here, so that the group exists before anything is sent to it, whichever runs first.
  ::setpgid(pid, pid);

  StartedChild started;
  started.pid = pid;
  if (spec.low_io_priority) {
    if (::syscall(SYS_ioprio_set, kIoprioWhoProcess, pid, best_effort_io_priority(7)) == 0) {
      started.io_priority = "best-effort 7";
    } else {
      started.io_priority = std::string("not set: ioprio_set: ") + std::strerror(errno);
      started.warnings.push_back("I/O priority " + started.io_priority);
    }
  } else {
    started.io_priority = "not set (--no-ionice)";
  }
  if (spec.oom_score_adj) {
    std::string path = fmt::format("/proc/{}/oom_score_adj", pid);
    std::string value = fmt::format("{}\n", *spec.oom_score_adj);
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write_all(fd, value.data(), value.size());
    int err = errno;
    if (fd >= 0) ::close(fd);
    if (ok) {
      started.oom_score_adj = spec.oom_score_adj;
    } else {
      // Lowering the score below what sparkdoc has needs CAP_SYS_RESOURCE.
      started.warnings.push_back(fmt::format("OOM score adjustment {} not set: {}",
                                             *spec.oom_score_adj, std::strerror(err)));
    }
  }
  if (spec.take_terminal) started.has_terminal = give_terminal(pid);

  char go_byte = 'g';
  bool sent = write_all(go.fd[1], &go_byte, 1);
  go.close_end(1);
  int exec_errno = 0;
  size_t got = sent ? read_full(report.fd[0], &exec_errno, sizeof exec_errno) : 0;
  if (!sent || got == sizeof exec_errno) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (started.has_terminal) give_terminal(::getpgrp());
    ExecFailure failure;
    failure.exit_status = exec_errno == ENOENT ? 127 : 126;
    failure.message =
        fmt::format("{}: {}", spec.argv.front(),
                    sent ? std::strerror(exec_errno) : std::string("could not start it"));
    started.pid = -1;
    started.has_terminal = false;
    started.exec_failed = failure;
  }
  return started;
}

Result<pid_t> start_sidecar(const SidecarSpec& spec, const sigset_t& child_mask) {
  std::vector<std::string> args{spec.exe};
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  CStrings argv(args);
  Pipe report;
  if (!report.open()) return fail(std::string("pipe: ") + std::strerror(errno));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(0);
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
    }
    if (spec.stderr_fd >= 0) ::dup2(spec.stderr_fd, STDERR_FILENO);
    default_dispositions();
    ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    ::close(report.fd[0]);
    if (spec.cwd_fd < 0 || ::fchdir(spec.cwd_fd) == 0) ::execv(argv.data()[0], argv.data());
    int err = errno;
    write_all(report.fd[1], &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  report.close_end(1);
  int exec_errno = 0;
  if (read_full(report.fd[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return fail(spec.exe + ": " + std::strerror(exec_errno));
  }
  return pid;
}

ExitInfo decode_exit(int wait_status) {
  ExitInfo info;
  if (WIFEXITED(wait_status)) {
    info.code = WEXITSTATUS(wait_status);
    info.status = *info.code;
  } else if (WIFSIGNALED(wait_status)) {
    info.signal = WTERMSIG(wait_status);
    info.status = 128 + *info.signal;
    info.core_dumped = WCOREDUMP(wait_status);
  }
  return info;
}

}  // namespace sparkdoc::run
