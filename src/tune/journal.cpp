#include "tune/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "core/fs.h"
#include "sys/text.h"
#include "tune/journal_file.h"

namespace sparkdoc::tune {
namespace {

using detail::json;

constexpr std::string_view kJournalName = "sparkdoc/journal";

}  // namespace

using detail::check_journal_file;
using detail::drop_torn_tail;
using detail::ensure_dir;
using detail::errno_text;
using detail::fsync_dir;
using detail::is_utf8;
using detail::lock;
using detail::parent_of;
using detail::to_line;
using detail::write_all;

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

Result<void> JournalWriter::record_gpu_clocks(std::string_view uuid, std::string_view name,
                                              unsigned min_mhz, unsigned max_mhz,
                                              std::optional<unsigned> gpu_max_mhz) {
  if (uuid.empty() || !is_utf8(uuid)) return fail("a GPU without a UUID cannot be journaled");
  json j = {{"op", "gpu_clocks"},
            {"uuid", std::string(uuid)},
            {"name", sys::valid_utf8(name)},
            {"min_mhz", min_mhz},
            {"max_mhz", max_mhz}};
  if (gpu_max_mhz) j["gpu_max_mhz"] = *gpu_max_mhz;
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

}  // namespace sparkdoc::tune
