#include "tune/services.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/strings.h"

extern char** environ;

namespace sparkdoc::tune {
namespace {

constexpr size_t kOutputMaxBytes = 4096;

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<std::string> stop_unit_argv(std::string_view unit, unsigned owner_uid,
                                        std::string_view owner_name, unsigned euid) {
  std::string u(unit);
  if (owner_uid == euid) return {"systemctl", "--user", "stop", u};
  if (owner_name == kRemoteDesktopSystemUser) return {"systemctl", "stop", u};
  return {"systemctl", "--user", fmt::format("--machine={}@", owner_name), "stop", u};
}

Result<unsigned> process_owner(const Root& root, int pid) {
  std::string path = root.path(fmt::format("/proc/{}", pid));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    return fail(err == ENOENT ? Why::kAbsent : Why::kError,
                fmt::format("process {} is gone: {}", pid, std::strerror(err)));
  }
  return static_cast<unsigned>(st.st_uid);
}

Result<std::string> user_name(unsigned uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::array<char, 4096> buf{};
  int rc = ::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || found == nullptr)
    return fail(Why::kAbsent, fmt::format("no user with uid {}", uid));
  return std::string(found->pw_name);
}

Result<std::string> find_program(std::string_view name, std::string_view path_env) {
  if (name.empty()) return fail("no program named");
  if (name.find('/') != std::string_view::npos) {
    std::string path(name);
    if (executable_file(path)) return path;
    return fail(Why::kAbsent, fmt::format("{} is not an executable file", path));
  }
  for (auto dir : split(path_env, ':')) {
    std::string candidate = dir.empty() ? std::string(name) : fmt::format("{}/{}", dir, name);
    if (executable_file(candidate)) return candidate;
  }
  return fail(Why::kAbsent, fmt::format("{} not found on PATH", name));
}

Result<ProgramOutcome> run_program(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout) {
  if (argv.empty()) return fail("no program to run");
  // Everything the child needs is made before the fork (see the header).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) return fail(fmt::format("cannot open /dev/null: {}", std::strerror(errno)));
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(devnull);
    return fail(fmt::format("cannot make a pipe: {}", std::strerror(err)));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(devnull);
    ::close(out[0]);
    ::close(out[1]);
    return fail(fmt::format("cannot fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    // dup2 clears FD_CLOEXEC on the copies, so these three survive the exec.
    if (::dup2(devnull, STDIN_FILENO) < 0 || ::dup2(out[1], STDOUT_FILENO) < 0 ||
        ::dup2(out[1], STDERR_FILENO) < 0) {
      ::_exit(126);
    }
    ::execve(args[0], args.data(), environ);
    ::_exit(127);
  }
  ::close(devnull);
  ::close(out[1]);

  ProgramOutcome outcome;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[1024];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      outcome.timed_out = true;
      break;
    }
    struct pollfd p {
      out[0], POLLIN, 0
    };
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer closed: the child is done (or closed its outputs)
    size_t room = kOutputMaxBytes - std::min(kOutputMaxBytes, outcome.output.size());
    outcome.output.append(buf, std::min(room, static_cast<size_t>(n)));
  }
  ::close(out[0]);
  // A child that closed its outputs may still run: the deadline holds for the wait too.
  int status = 0;
  for (;;) {
    pid_t waited = ::waitpid(pid, &status, outcome.timed_out ? 0 : WNOHANG);
    if (waited == pid) break;
    if (waited < 0 && errno != EINTR) return fail("lost the child process");
    if (waited == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        outcome.timed_out = true;
      } else {
        ::usleep(10000);
      }
    }
  }
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

}  // namespace sparkdoc::tune
