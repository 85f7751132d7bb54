#include "run/runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <ostream>
#include <thread>

#include "core/strings.h"
#include "core/units.h"
#include "core/version.h"
#include "facts/run_summary.h"
#include "run/load_window.h"
#include "run/log_folder.h"
#include "run/tuning.h"
#include "runlog/reader.h"
#include "runlog/writer.h"
#include "tune/clock_cap.h"
#include "tune/tunables.h"

namespace sparkdoc::run {
namespace {

using runlog::CacheDrop;
using runlog::LoadWindowEnd;
using runlog::RunEnd;
using runlog::RunStart;
using SteadyClock = std::chrono::steady_clock;

// How long the sidecar gets to write its last line after SIGTERM before SIGKILL.
constexpr auto kSidecarGrace = std::chrono::seconds(3);
constexpr auto kPollInterval = std::chrono::milliseconds(500);

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string current_dir() {
  std::error_code ec;
  auto p = std::filesystem::current_path(ec);
  return ec ? std::string() : p.string();
}

// run.jsonl: each line one write(2) to an O_APPEND file, so the dropper thread's lines and the
// supervisor's never interleave inside a line, and a kill -9 loses at most the line in flight.
class RunLogFile {
 public:
  explicit RunLogFile(Fd fd) : fd_(std::move(fd)) {}
  RunLogFile(const RunLogFile&) = delete;
  RunLogFile& operator=(const RunLogFile&) = delete;
  void append(std::string line) {
    line += '\n';
    std::lock_guard<std::mutex> lock(mu_);
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(fd_.get(), p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a full disk loses log lines, never the run
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  Fd fd_;
  std::mutex mu_;
};

// 000 §7's dropper thread, from outside the process: sync and drop_caches=3 every N seconds
// until the load window ends.
class CacheDropper {
 public:
  CacheDropper(const RunOptions& o, std::string watch_log, RunLogFile& log)
      : o_(o), watch_log_(std::move(watch_log)), log_(log) {}
  ~CacheDropper() { stop(); }

  void start() {
    thread_ = std::thread([this] { loop(); });
  }

  // Stops it (waiting for a drop in progress: sync(2) can take a while on a busy disk).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    LoadWindowRule rule;
    rule.limit_s = o_.drop_for_s;
    auto start = SteadyClock::now();
    LoadWindow window(rule, 0);
    std::optional<runlog::LogFollower> follower;
    if (!watch_log_.empty()) follower.emplace(watch_log_);
    auto every = std::chrono::duration<double>(*o_.drop_every_s);
    std::string reason = "the command ended";
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (cv_.wait_for(lock, every, [this] { return stop_; })) break;
      }
      auto dropped = tune::sync_and_drop_caches(o_.root);
      double ts = wall_now();
      log_.append(runlog::to_line(
          CacheDrop{ts, dropped.has_value(), dropped ? "" : dropped.error().message}));
      std::optional<uint64_t> gpu_memory;
      if (follower) {
        follower->poll();
        const auto& samples = follower->log().samples;
        if (!samples.empty()) gpu_memory = facts::sample_gpu_memory(samples.back());
      }
      double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
      if (auto end = window.check(elapsed, gpu_memory)) {
        reason = *end;
        break;
      }
    }
    double ts = wall_now();
    log_.append(runlog::to_line(LoadWindowEnd{ts, reason}));
  }

  const RunOptions& o_;
  std::string watch_log_;
  RunLogFile& log_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// The supervisor's view of the sidecar.
struct Sidecar {
  pid_t pid = -1;
  bool running = false;
  std::string ended_early;  // set when it ended before the command
};

void reap_sidecar(Sidecar& sidecar, bool early) {
  int status = 0;
  pid_t got = ::waitpid(sidecar.pid, &status, WNOHANG);
  if (got != sidecar.pid) return;
  sidecar.running = false;
  if (early) {
    ExitInfo info = decode_exit(status);
    sidecar.ended_early = info.signal ? "killed by " + signal_name(*info.signal)
                                      : fmt::format("exit {}", info.status);
  }
}

void stop_sidecar(Sidecar& sidecar, SignalGate& gate) {
  if (!sidecar.running) return;
  ::kill(sidecar.pid, SIGTERM);
  auto deadline = SteadyClock::now() + kSidecarGrace;
  while (sidecar.running && SteadyClock::now() < deadline) {
    reap_sidecar(sidecar, false);
    if (!sidecar.running) break;
    gate.wait(std::chrono::milliseconds(100));
  }
  if (sidecar.running) {
    ::kill(sidecar.pid, SIGKILL);
    int status = 0;
    while (::waitpid(sidecar.pid, &status, 0) < 0 && errno == EINTR) {
    }
    sidecar.running = false;
  }
}

// Job control with the terminal handed to the command: a Ctrl-Z stops the command's group; the
// shell only sees sparkdoc, so sparkdoc stops too, and on `fg` hands the terminal back and
// continues the command.
void follow_stop(pid_t child, bool has_terminal) {
  if (!has_terminal) return;
  give_terminal(::getpgrp());
  ::kill(::getpid(), SIGSTOP);
  give_terminal(child);
  ::kill(-child, SIGCONT);
}

// The command's name in messages: argv[0]'s file name.
std::string command_name(const std::string& argv0) {
  size_t slash = argv0.find_last_of('/');
  return slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
}

}  // namespace

Result<RunOutcome> supervise(const RunOptions& o, SignalGate& gate, std::ostream& say) {
  RunOutcome outcome;
  auto folder = make_log_folder(o.log_dir, o.euid);
  if (!folder) return fail("no log folder, so nothing started: " + folder.error().message);
  outcome.log_dir = folder->path;
  auto run_file = create_file(*folder, "run.jsonl", O_APPEND);
  if (!run_file) return fail("no run log, so nothing started: " + run_file.error().message);
  RunLogFile log(std::move(*run_file));
  say << "sparkdoc run: log " << folder->child("run.jsonl") << "\n" << std::flush;

  if (int sig = gate.take_pending_forwarded()) {
    say << fmt::format("sparkdoc run: {} arrived before the command started; nothing started\n",
                       signal_name(sig));
    outcome.exit_status = 128 + sig;
    return outcome;
  }

  Tuning tuning(o);
  RunStart start;
  if (o.tune_vm) {
    auto tuned = tuning.set_vm_for_load();
    if (!tuned) return fail("vm tuning: " + tuned.error().message);
    start.tuned = *tuned;
    for (const auto& t : start.tuned) {
      say << fmt::format("sparkdoc run: {} {} -> {} (journaled; restored when the run ends)\n",
                         t.path, t.old_value, t.new_value);
    }
  }
  if (o.cap_clocks) {
    auto capped = tuning.cap_clocks(*o.cap_clocks);
    if (!capped) return fail("clock cap: " + capped.error().message);
    for (const auto& t : *capped) {
      say << fmt::format(
          "sparkdoc run: clocks of {} {} -> {} (journaled; put back when the run ends)\n", t.path,
          t.old_value, t.new_value);
    }
    if (capped->empty()) {
      say << "sparkdoc run: the GPU clocks are already capped to "
          << tune::clock_cap_text(*o.cap_clocks) << " by `sparkdoc clean`; nothing changed\n";
    }
    start.tuned.insert(start.tuned.end(), capped->begin(), capped->end());
  }

  Sidecar sidecar;
  std::string watch_log = folder->child("watch.jsonl");
  Fd watch_err;
  if (!o.watch) {
    start.telemetry = "none (--no-watch)";
  } else if (!o.watch_unavailable.empty()) {
    start.telemetry = "none: " + o.watch_unavailable;
    say << "sparkdoc run: no telemetry: " << o.watch_unavailable
        << "; the command runs without a watch log\n";
  } else {
    // The sidecar works in the log folder, so its log lands there whatever the folder's path
    // names by then.
    SidecarSpec spec;
    spec.exe = o.watch_exe;
    spec.args = {
        "watch",  "--log", "watch.jsonl", "--interval", fmt::format("{}", o.watch_interval_s),
        "--quiet"};
    spec.cwd_fd = folder->fd.get();
    auto err_file = create_file(*folder, "watch.err");
    if (err_file) {
      watch_err = std::move(*err_file);
      spec.stderr_fd = watch_err.get();
    }
    auto pid = err_file ? start_sidecar(spec, gate.outside_mask())
                        : Result<pid_t>(tl::unexpected(std::move(err_file.error())));
    if (pid) {
      sidecar.pid = *pid;
      sidecar.running = true;
      start.watch_log = "watch.jsonl";
      start.telemetry = fmt::format("watch sidecar pid {}", *pid);
    } else {
      start.telemetry = "none: the watch sidecar did not start: " + pid.error().message;
      say << "sparkdoc run: no telemetry: the watch sidecar did not start: " << pid.error().message
          << "\n";
    }
  }

  ChildSpec spec;
  spec.argv = o.argv;
  spec.env = o.env.entries;
  spec.oom_score_adj = o.oom_score_adj;
  spec.low_io_priority = o.low_io_priority;
  spec.take_terminal = ::isatty(STDIN_FILENO) == 1 && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  double start_ts = wall_now();
  auto start_steady = SteadyClock::now();
  auto child = start_child(spec, gate.outside_mask());
  if (!child) {
    stop_sidecar(sidecar, gate);
    return fail("cannot start the command: " + child.error().message);
  }
  for (const auto& w : child->warnings) say << "sparkdoc run: " << w << "\n";
  if (auto noted = tuning.note_command(child->pid, command_name(o.argv.front())); !noted) {
    say << "sparkdoc run: the journal does not name the command (" << noted.error().message
        << "): if this sparkdoc is killed, the next start restores the values at once\n";
  }

  start.ts = start_ts;
  start.sparkdoc_version = std::string(kVersion);
  start.host = host_name();
  start.pid = ::getpid();
  start.child_pid = child->pid > 0 ? child->pid : 0;
  start.argv = o.argv;
  start.cwd = current_dir();
  start.env_removed = o.env.removed;
  start.env_set = o.env.set;
  start.distributed = o.distributed;
  start.preflight = o.preflight;
  start.oom_score_adj = child->oom_score_adj;
  start.io_priority = child->io_priority;
  if (o.drop_every_s) {
    start.drop_cache_every_s = o.drop_every_s;
    start.drop_cache_for_s = o.drop_for_s;
  }
  log.append(runlog::to_line(start));

  RunEnd end;
  std::optional<CacheDropper> dropper;
  if (child->exec_failed) {
    say << "sparkdoc run: cannot run " << child->exec_failed->message << "\n";
    end.exit_status = child->exec_failed->exit_status;
    end.exit_code = end.exit_status;
    end.notes.push_back("the command did not start: " + child->exec_failed->message);
  } else {
    outcome.started = true;
    if (o.drop_every_s) {
      dropper.emplace(o, sidecar.running ? watch_log : std::string(), log);
      dropper->start();
    }
    pid_t pid = child->pid;
    bool done = false;
    while (!done) {
      int sig = gate.wait(kPollInterval);
      if (sig == 0 || sig == SIGTTOU) continue;
      if (sig == SIGCHLD) {
        int status = 0;
        pid_t got;
        while ((got = ::waitpid(pid, &status, WNOHANG | WUNTRACED)) == pid) {
          if (WIFSTOPPED(status)) {
            follow_stop(pid, child->has_terminal);
            continue;
          }
          ExitInfo info = decode_exit(status);
          end.exit_status = info.status;
          end.exit_code = info.code;
          if (info.signal) end.signal = signal_name(*info.signal);
          end.core_dumped = info.core_dumped;
          done = true;
          break;
        }
        if (sidecar.running) reap_sidecar(sidecar, true);
        continue;
      }
      end.signals_forwarded.push_back(signal_name(sig));
      ::kill(-pid, sig);
      say << fmt::format("sparkdoc run: forwarded {} to the command (process group {})\n",
                         signal_name(sig), pid);
    }
    if (child->has_terminal) give_terminal(::getpgrp());
    if (group_alive(pid)) {
      end.notes.push_back(fmt::format(
          "processes the command started still run in process group {} (kill -TERM -{})", pid,
          pid));
    }
  }
  end.duration_s = std::chrono::duration<double>(SteadyClock::now() - start_steady).count();
  if (dropper) dropper->stop();
  if (!sidecar.ended_early.empty()) {
    end.notes.push_back("the watch sidecar ended before the command (" + sidecar.ended_early +
                        "); see " + folder->child("watch.err"));
  }
  stop_sidecar(sidecar, gate);
  // An empty watch.err says nothing; one with text stays for a person to read.
  struct stat err_stat {};
  if (watch_err.valid() && ::fstat(watch_err.get(), &err_stat) == 0 && err_stat.st_size == 0) {
    ::unlinkat(folder->fd.get(), "watch.err", 0);
  }
  end.restored = tuning.restore();
  double end_ts = wall_now();
  end.ts = end_ts;
  log.append(runlog::to_line(end));

  outcome.exit_status = end.exit_status;
  auto read = runlog::read_log(folder->path);
  if (read) outcome.log = std::move(*read);
  return outcome;
}

}  // namespace sparkdoc::run
