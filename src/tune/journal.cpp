#include "tune/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/fs.h"
#include "core/strings.h"
#include "sys/text.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {
namespace {

using nlohmann::json;

constexpr std::string_view kJournalName = "sparkdoc/journal";

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p: missing components are created with `mode`; the last one must then be a real
// folder (not a link) owned by `euid` and writable by nobody else, or the journal in it could
// be swapped for something else under our feet.
Result<void> ensure_dir(const std::string& dir, mode_t mode, unsigned euid) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), mode) == 0) {
      // The umask may have taken bits away; root's folder must stay searchable so that other
      // users' sparkdoc can notice an unrestored journal.
      ::chmod(prefix.c_str(), mode);
    } else if (errno != EEXIST) {
      int err = errno;
      return fail(why_from_errno(err),
                  fmt::format("cannot create folder {}: {}", prefix, errno_text(err)));
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    int err = errno;
    return fail(why_from_errno(err), fmt::format("cannot stat {}: {}", dir, errno_text(err)));
  }
  if (!S_ISDIR(st.st_mode)) return fail(fmt::format("{} is not a folder (a link?)", dir));
  if (st.st_uid != euid) {
    return fail(
        fmt::format("{} belongs to uid {}, not to this user (uid {})", dir, st.st_uid, euid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return fail(
        fmt::format("{} is writable by other users; refusing to keep a journal there", dir));
  }
  return {};
}

// The checks every opened journal passes: a regular file with one name, owned by the caller.
Result<void> check_journal_file(int fd, const std::string& path, unsigned euid) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail(fmt::format("cannot stat {}: {}", path, errno_text(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(fmt::format("{} is {}, not a regular file; remove it, and sparkdoc makes a new "
                            "journal when it next changes a value",
                            path, file_type_name(st.st_mode)));
  }
  if (st.st_uid != euid) {
    return fail(
        fmt::format("{} belongs to uid {}, not to this user (uid {})", path, st.st_uid, euid));
  }
  if (st.st_nlink != 1) {
    return fail(fmt::format("{} has {} names (hard links); refusing it", path, st.st_nlink));
  }
  if ((st.st_mode & 077) != 0 && ::fchmod(fd, 0600) != 0) {
    return fail(fmt::format("cannot make {} private: {}", path, errno_text(errno)));
  }
  return {};
}

Result<void> lock(int fd, const std::string& path) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
  int err = errno;
  if (err == EWOULDBLOCK) {
    return fail(
        fmt::format("another sparkdoc is changing or restoring values now ({} is locked)", path));
  }
  return fail(fmt::format("cannot lock {}: {}", path, errno_text(err)));
}

Result<void> fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("cannot open {}: {}", dir, errno_text(errno)));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return fail(fmt::format("cannot fsync {}: {}", dir, errno_text(err)));
  return {};
}

Result<void> write_all(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("cannot write {}: {}", path, errno_text(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

// A crash mid-write can leave the last line without its '\n'. Appending after it would glue
// the next line to it and turn both into one damaged line, so the unfinished tail is cut off
// first: its change was never made (see the header's crash rule).
Result<void> drop_torn_tail(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail(fmt::format("cannot stat {}: {}", path, errno_text(errno)));
  }
  auto size = static_cast<size_t>(st.st_size);
  if (size == 0) return {};
  if (size > kJournalMaxBytes) {
    return fail(fmt::format("{} is {} bytes, too large to be a sparkdoc journal", path, size));
  }
  std::string text(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::pread(fd, text.data() + got, size - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(fmt::format("cannot read {}: {}", path, errno_text(errno)));
    got += static_cast<size_t>(n);
  }
  size_t last = text.find_last_of('\n');
  size_t keep = last == std::string::npos ? 0 : last + 1;
  if (keep == size) return {};
  if (::ftruncate(fd, static_cast<off_t>(keep)) != 0 || ::fsync(fd) != 0) {
    return fail(
        fmt::format("cannot cut the unfinished last line of {}: {}", path, errno_text(errno)));
  }
  return {};
}

// Journal lines carry paths from the machine; JSON needs UTF-8, and a path changed to fit
// would name another file at restore time.
Result<std::string> to_line(const json& j) {
  try {
    return j.dump() + "\n";
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot write a journal line: {}", e.what()));
  }
}

bool is_utf8(std::string_view s) {
  return sys::valid_utf8(s) == s;
}

const json* member(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<std::string> string_member(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> int_member(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

// One whole line: what it records, or why it is damaged.
struct ParsedLine {
  std::optional<JournalSession> session;
  std::optional<ValueChange> change;
  std::optional<SwapOffRecord> swap;
  struct Command {
    int64_t pid = 0;
    uint64_t start_ticks = 0;
    std::string name;
  };
  std::optional<Command> command;
  std::string problem;
};

ParsedLine parse_line(std::string_view text, size_t number) {
  ParsedLine out;
  if (text.size() > kJournalMaxLineBytes) {
    out.problem = fmt::format("line {}: longer than {} bytes", number, kJournalMaxLineBytes);
    return out;
  }
  if (text.empty() || text.front() != '{') {
    out.problem = fmt::format("line {}: not a JSON object", number);
    return out;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.problem = fmt::format("line {}: not a JSON object", number);
    return out;
  }
  auto op = string_member(j, "op");
  if (!op) {
    out.problem = fmt::format("line {}: no \"op\"", number);
    return out;
  }
  if (*op == "begin") {
    auto version = int_member(j, "sparkdoc_journal");
    if (!version) {
      out.problem = fmt::format("line {}: \"begin\" without a version", number);
      return out;
    }
    JournalSession s;
    s.line = number;
    s.version = static_cast<int>(std::clamp<int64_t>(*version, -1, 1 << 20));
    s.pid = int_member(j, "pid").value_or(0);
    s.started_at = string_member(j, "started_at").value_or("");
    s.command = string_member(j, "command").value_or("");
    out.session = std::move(s);
    return out;
  }
  if (*op == "set") {
    auto path = string_member(j, "path");
    auto old_value = string_member(j, "old");
    auto new_value = string_member(j, "new");
    if (!path || !old_value || !new_value) {
      out.problem = fmt::format("line {}: \"set\" needs path, old and new as strings", number);
      return out;
    }
    out.change = ValueChange{number, *path, *old_value, *new_value};
    return out;
  }
  if (*op == "swapoff") {
    auto path = string_member(j, "path");
    auto priority = int_member(j, "priority");
    if (!path || !priority || *priority < -(1 << 20) || *priority > (1 << 20)) {
      out.problem = fmt::format("line {}: \"swapoff\" needs path and priority", number);
      return out;
    }
    out.swap = SwapOffRecord{number, *path, static_cast<int>(*priority)};
    return out;
  }
  if (*op == "command") {
    auto pid = int_member(j, "pid");
    auto ticks = int_member(j, "start_ticks");
    auto name = string_member(j, "name");
    if (!pid || *pid <= 0 || !ticks || *ticks <= 0 || !name) {
      out.problem =
          fmt::format("line {}: \"command\" needs a pid, its start_ticks and a name", number);
      return out;
    }
    out.command = ParsedLine::Command{*pid, static_cast<uint64_t>(*ticks), *name};
    return out;
  }
  out.problem = fmt::format("line {}: unknown op \"{}\"", number, sys::valid_utf8(*op));
  return out;
}

}  // namespace

Result<JournalLocation> journal_location(const Root& root, unsigned euid,
                                         std::string_view xdg_state_home, std::string_view home) {
  JournalLocation loc;
  if (euid == 0) {
    loc.machine_path = std::string(kSystemJournalPath);
    loc.system = true;
  } else if (!xdg_state_home.empty() && xdg_state_home.front() == '/') {
    loc.machine_path = fmt::format("{}/{}", xdg_state_home, kJournalName);
  } else if (!home.empty() && home.front() == '/') {
    loc.machine_path = fmt::format("{}/.local/state/{}", home, kJournalName);
  } else {
    return fail(Why::kAbsent,
                "no place for the journal: neither XDG_STATE_HOME nor HOME is an absolute path");
  }
  while (loc.machine_path.find("//") != std::string::npos) {
    loc.machine_path.replace(loc.machine_path.find("//"), 2, "/");
  }
  loc.path = root.path(loc.machine_path);
  return loc;
}

std::vector<JournalLocation> journals_to_notice(const Root& root, unsigned euid,
                                                std::string_view xdg_state_home,
                                                std::string_view home) {
  std::vector<JournalLocation> out;
  if (auto system = journal_location(root, 0, "", "")) out.push_back(*system);
  if (euid != 0) {
    if (auto own = journal_location(root, euid, xdg_state_home, home)) out.push_back(*own);
  }
  return out;
}

std::optional<JournalLocation> existing_journal(const Root& root, unsigned euid,
                                                std::string_view xdg_state_home,
                                                std::string_view home) {
  for (auto& loc : journals_to_notice(root, euid, xdg_state_home, home)) {
    struct stat st {};
    if (::lstat(loc.path.c_str(), &st) == 0) return std::move(loc);
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> JournalContents::originals() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : changes) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o.first == c.path;
    if (!seen) out.emplace_back(c.path, c.old_value);
  }
  return out;
}

std::vector<SwapOffRecord> JournalContents::swap_areas() const {
  std::vector<SwapOffRecord> out;
  for (const auto& s : swaps_off) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o.path == s.path;
    if (!seen) out.push_back(s);
  }
  return out;
}

Result<JournalContents> parse_journal(std::string_view text) {
  try {
    if (text.size() > kJournalMaxBytes) {
      return fail(
          fmt::format("journal of {} bytes is too large to be a sparkdoc journal", text.size()));
    }
    JournalContents c;
    bool in_skipped_session = false;  // after a "begin" of another version
    size_t number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) {
        c.truncated_bytes = text.size() - pos;
        break;
      }
      std::string_view line = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++number;
      ParsedLine parsed = parse_line(line, number);
      if (number == 1) {
        // Whole lines are never damaged by a crash: a bad first line is not our file.
        if (!parsed.session) {
          return fail(parsed.problem.empty()
                          ? std::string("not a sparkdoc journal: the first line is not \"begin\"")
                          : "not a sparkdoc journal: " + parsed.problem);
        }
      }
      if (parsed.session && parsed.session->version != kJournalVersion) {
        if (number == 1) {
          return fail(
              fmt::format("journal version {} is not {} (written by another sparkdoc "
                          "version)",
                          parsed.session->version, kJournalVersion));
        }
        c.problems.push_back(
            fmt::format("line {}: journal version {}", number, parsed.session->version));
        in_skipped_session = true;
        continue;
      }
      if (parsed.session) {
        c.sessions.push_back(std::move(*parsed.session));
        in_skipped_session = false;
      }
      if (parsed.change) c.changes.push_back(std::move(*parsed.change));
      if (parsed.swap) c.swaps_off.push_back(std::move(*parsed.swap));
      if (parsed.command && in_skipped_session) {
        // Another version's session: its command is not one of the sessions read.
        c.problems.push_back(fmt::format("line {}: \"command\" of a session not read", number));
      } else if (parsed.command) {  // belongs to the session it follows; line 1 is always one
        c.sessions.back().command_pid = parsed.command->pid;
        c.sessions.back().command_start_ticks = parsed.command->start_ticks;
        c.sessions.back().command_name = std::move(parsed.command->name);
      }
      if (!parsed.problem.empty()) c.problems.push_back(std::move(parsed.problem));
    }
    return c;
  } catch (const std::exception& e) {
    return fail(fmt::format("journal: {}", e.what()));
  }
}

Result<JournalWriter> JournalWriter::open(const JournalLocation& location, unsigned euid,
                                          const JournalSession& session) {
  std::string dir = parent_of(location.path);
  if (auto made = ensure_dir(dir, location.system ? 0755 : 0700, euid); !made) {
    return tl::unexpected(made.error());
  }
  JournalWriter w;
  w.location_ = location;
  const char* path = location.path.c_str();
  w.fd_ = ::open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (w.fd_ >= 0) {
    w.created_ = true;
  } else if (errno == EEXIST) {
    // O_NONBLOCK: a FIFO planted at the path must fail (ENXIO), not hang the open.
    w.fd_ = ::open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  }
  if (w.fd_ < 0) {
    int err = errno;
    if (err == ELOOP) {
      return fail(fmt::format("{} is a symbolic link; refusing to write the journal through it",
                              location.path));
    }
    return fail(why_from_errno(err),
                fmt::format("cannot open {}: {}", location.path, errno_text(err)));
  }
  auto checked = check_journal_file(w.fd_, location.path, euid);
  if (!checked) return tl::unexpected(checked.error());
  auto locked = lock(w.fd_, location.path);
  if (!locked) return tl::unexpected(locked.error());
  if (!w.created_) {
    if (auto cut = drop_torn_tail(w.fd_, location.path); !cut) return tl::unexpected(cut.error());
  }
  if (w.created_) {
    if (auto synced = fsync_dir(dir); !synced) return tl::unexpected(synced.error());
  }
  json begin = {{"op", "begin"},
                {"sparkdoc_journal", kJournalVersion},
                {"pid", session.pid},
                {"started_at", sys::valid_utf8(session.started_at)},
                {"command", sys::valid_utf8(session.command)}};
  auto line = to_line(begin);
  if (!line) return tl::unexpected(line.error());
  if (auto written = w.append_line(*line); !written) return tl::unexpected(written.error());
  return w;
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      location_(std::move(other.location_)),
      created_(other.created_),
      records_(other.records_) {}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    location_ = std::move(other.location_);
    created_ = other.created_;
    records_ = other.records_;
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> JournalWriter::append_line(const std::string& line) {
  if (fd_ < 0) return fail("the journal is closed");
  if (auto written = write_all(fd_, line, location_.path); !written) return written;
  if (::fsync(fd_) != 0) {
    return fail(fmt::format("cannot fsync {}: {}", location_.path, errno_text(errno)));
  }
  return {};
}

Result<void> JournalWriter::record_set(std::string_view machine_path, std::string_view old_value,
                                       std::string_view new_value) {
  if (!is_utf8(machine_path) || !is_utf8(old_value) || !is_utf8(new_value)) {
    return fail("a value to journal is not UTF-8 text");
  }
  json j = {{"op", "set"},
            {"path", std::string(machine_path)},
            {"old", std::string(old_value)},
            {"new", std::string(new_value)}};
  auto line = to_line(j);
  if (!line) return tl::unexpected(line.error());
  auto written = append_line(*line);
  if (written) ++records_;
  return written;
}

Result<void> JournalWriter::record_swapoff(std::string_view machine_path, int priority) {
  if (!is_utf8(machine_path)) {
    return fail(fmt::format("swap area path {} is not UTF-8 text; it cannot be journaled",
                            sys::valid_utf8(machine_path)));
  }
  json j = {{"op", "swapoff"}, {"path", std::string(machine_path)}, {"priority", priority}};
  auto line = to_line(j);
  if (!line) return tl::unexpected(line.error());
  auto written = append_line(*line);
  if (written) ++records_;
  return written;
}

Result<void> JournalWriter::record_command(int64_t pid, uint64_t start_ticks,
                                           std::string_view name) {
  if (!is_utf8(name)) return fail("a command name to journal is not UTF-8 text");
  json j = {{"op", "command"},
            {"pid", pid},
            {"start_ticks", start_ticks},
            {"name", std::string(name)}};
  auto line = to_line(j);
  if (!line) return tl::unexpected(line.error());
  return append_line(*line);
}

Result<void> JournalWriter::remove() {
  if (!created_) {
    return fail(
        fmt::format("{} holds changes of an earlier run; it stays for "
                    "`sparkdoc clean --restore`",
                    location_.path));
  }
  if (::unlink(location_.path.c_str()) != 0) {
    return fail(fmt::format("cannot remove {}: {}", location_.path, errno_text(errno)));
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return fsync_dir(parent_of(location_.path));
}

bool RestoreReport::complete() const {
  return !found || removed;
}

Result<RestoreReport> restore_journal(const JournalLocation& location, const Root& root,
                                      unsigned euid, SwapControl& swap) {
  RestoreReport report;
  report.location = location;
  int fd = ::open(location.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return report;
    if (err == ELOOP) {
      return fail(fmt::format("{} is a symbolic link; refusing to read the journal through it",
                              location.path));
    }
    return fail(why_from_errno(err),
                fmt::format("cannot open {}: {}", location.path, errno_text(err)));
  }
  report.found = true;
  // The descriptor is closed on every path below; the lock goes with it.
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (auto checked = check_journal_file(fd, location.path, euid); !checked) {
    return tl::unexpected(checked.error());
  }
  if (auto locked = lock(fd, location.path); !locked) return tl::unexpected(locked.error());

  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("cannot read {}: {}", location.path, errno_text(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kJournalMaxBytes) break;
  }
  auto contents = parse_journal(text);
  if (!contents) {
    return fail(fmt::format("{}: {}", location.path, contents.error().message));
  }
  report.problems = contents->problems;
  report.truncated_bytes = contents->truncated_bytes;

  for (const auto& [path, original] : contents->originals()) {
    RestoredValue v;
    v.path = path;
    v.original = original;
    const TunableInfo* tunable = find_tunable(path);
    auto value = parse_i64(trim(original));
    if (tunable == nullptr) {
      v.error = "not on the list of values sparkdoc changes; left alone";
    } else if (!tunable->setting) {
      v.error = "an action, not a setting: nothing to restore; left alone";
    } else if (!value) {
      v.error = fmt::format("recorded value \"{}\" is not an integer; left alone",
                            sys::valid_utf8(original));
    } else if (*value < tunable->restore_min || *value > tunable->restore_max) {
      v.error = fmt::format(
          "recorded value {} is outside {}..{}, not one a machine had; left alone (set it by "
          "hand if it is right: sysctl vm.{}=VALUE)",
          *value, tunable->restore_min, tunable->restore_max, tunable->name);
    } else {
      if (auto before = read_tunable(root, tunable->id)) v.before = std::to_string(*before);
      auto written = write_tunable(root, tunable->id, *value);
      if (written) {
        v.restored = true;
      } else {
        v.error = written.error().message;
      }
    }
    if (!v.restored) {
      report.problems.push_back(fmt::format("{}: {}", sys::valid_utf8(path), v.error));
    }
    report.values.push_back(std::move(v));
  }

  auto active = swap.active();
  for (const auto& record : contents->swap_areas()) {
    RestoredSwap s;
    s.path = record.path;
    s.priority = record.priority;
    if (record.path.empty() || record.path.front() != '/') {
      s.error = "not an absolute path; left alone";
    } else {
      if (active) {
        for (const auto& area : *active) s.was_on = s.was_on || area.path == record.path;
      }
      if (s.was_on) {
        s.restored = true;
      } else if (auto on = swap.swap_on(record.path, record.priority)) {
        s.restored = true;
      } else {
        s.error = on.error().message;
      }
    }
    if (!s.restored) {
      report.problems.push_back(fmt::format("{}: {}", sys::valid_utf8(record.path), s.error));
    }
    report.swaps.push_back(std::move(s));
  }

  if (report.problems.empty()) {
    if (::unlink(location.path.c_str()) != 0) {
      report.problems.push_back(
          fmt::format("cannot remove {}: {}", location.path, errno_text(errno)));
    } else {
      report.removed = true;
      if (auto synced = fsync_dir(parent_of(location.path)); !synced) {
        report.problems.push_back(synced.error().message);
      }
    }
  }
  return report;
}

}  // namespace sparkdoc::tune
