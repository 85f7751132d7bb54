#include "tune/journal_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "core/fs.h"
#include "sys/text.h"

namespace sparkdoc::tune::detail {

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
    return fail(
        fmt::format("{} is {}, not a regular file; remove it, and sparkdoc makes a new "
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

Result<std::string> read_journal_fd(int fd, const std::string& path) {
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("cannot read {}: {}", path, errno_text(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kJournalMaxBytes) break;
  }
  return text;
}

}  // namespace sparkdoc::tune::detail
