#include "tune/ownership.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <limits>

#include "core/fs.h"
#include "core/strings.h"
#include "sys/proc_stat.h"

namespace sparkdoc::tune {

bool sparkdoc_running(int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max() || pid == ::getpid()) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  auto comm = read_text(fmt::format("/proc/{}/comm", pid), 256);
  return comm && trim(*comm) == "sparkdoc";
}

bool running_since(int64_t pid, uint64_t start_ticks) {
  if (start_ticks == 0) return false;
  auto stat = sys::read_proc_stat(Root(), pid);
  return stat && stat->state != 'Z' && stat->start_ticks == start_ticks;
}

JournalOwnership journal_ownership(const JournalContents& contents) {
  JournalOwnership out;
  if (contents.sessions.empty()) return out;
  for (const JournalSession& session : contents.sessions) {
    if (!session.command.starts_with("run")) {
      out.holder = JournalHolder::kClean;
      out.session = session;
    }
  }
  if (out.holder == JournalHolder::kClean) return out;
  out.session = contents.sessions.back();
  if (sparkdoc_running(out.session.pid)) {
    out.holder = JournalHolder::kWriterRunning;
  } else if (running_since(out.session.command_pid, out.session.command_start_ticks)) {
    out.holder = JournalHolder::kCommandRunning;
  }
  return out;
}

namespace {

std::string format_mtime(const struct stat& st) {
  std::time_t t = st.st_mtime;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

}  // namespace

std::optional<std::string> unrestored_journal_notice(const Root& root, unsigned euid,
                                                     std::string_view xdg_state_home,
                                                     std::string_view home) {
  for (const auto& loc : journals_to_notice(root, euid, xdg_state_home, home)) {
    struct stat st {};
    if (::lstat(loc.path.c_str(), &st) != 0) continue;
    std::optional<JournalOwnership> owner;
    bool capped = false;  // the GPU clocks stay capped too
    if (auto text = read_text(loc.path, kJournalMaxBytes)) {
      if (auto parsed = parse_journal(*text); parsed && !parsed->sessions.empty()) {
        owner = journal_ownership(*parsed);
        capped = !parsed->gpu_clocks.empty();
      }
    }
    if (owner && owner->holder == JournalHolder::kWriterRunning) continue;
    if (owner && owner->holder == JournalHolder::kCommandRunning) {
      return fmt::format(
          "sparkdoc: values changed by a killed `sparkdoc run` (pid {}) stay for the command it "
          "started ({}, pid {}), which still runs (journal {}); `sudo sparkdoc clean --restore` "
          "puts them back",
          owner->session.pid, owner->session.command_name, owner->session.command_pid, loc.path);
    }
    if (owner && owner->holder == JournalHolder::kClean) {
      return fmt::format(
          "sparkdoc: {} by `sparkdoc {}` {} still in place (journal {}, last written {} UTC); "
          "after training, `sparkdoc clean --restore` puts them back",
          capped ? "the GPU clock cap and the values set" : "values set", owner->session.command,
          capped ? "are" : "for the model load are", loc.path, format_mtime(st));
    }
    return fmt::format(
        "sparkdoc: values changed by an earlier run were not restored (journal {}, last written "
        "{} UTC); run `sparkdoc clean --restore`",
        loc.path, format_mtime(st));
  }
  return std::nullopt;
}

}  // namespace sparkdoc::tune
