#include "core/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/paths.h"

namespace sparkdoc {
namespace {

tl::unexpected<Error> errno_fail(const std::string& what, const std::string& path, int err) {
  return fail(why_from_errno(err), fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

tl::unexpected<Error> not_regular(const std::string& path, mode_t mode) {
  return fail(
      fmt::format("{} is {}, not a regular file; sparkdoc opens no other kind there "
                  "(put the file itself in its place)",
                  path, file_type_name(mode)));
}

// Why a new file could not be made at `name`: a link planted there is named as such.
tl::unexpected<Error> create_failure(int dir_fd, const std::string& name, const std::string& path,
                                     int err) {
  struct stat st {};
  if (err == EEXIST && ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return fail(
          fmt::format("{} is a symbolic link, which sparkdoc never writes through "
                      "(remove it, or name another file)",
                      path));
    }
    return fail(fmt::format("{} already exists (remove it, or name another file)", path));
  }
  return errno_fail("cannot create", path, err);
}

// A refusal to replace what is not a regular file. The rename that replaces never follows a
// link anyway; this is so that a link, a FIFO or a device is left alone and named.
// `entry` names it in the folder `dir` (AT_FDCWD: `entry` is the path).
Result<void> replaceable(int dir, const std::string& entry, const std::string& path) {
  struct stat st {};
  if (::fstatat(dir, entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  if (S_ISREG(st.st_mode)) return {};
  return fail(
      fmt::format("{} is {}; sparkdoc replaces only a regular file (remove it, or name "
                  "another file)",
                  path, file_type_name(st.st_mode)));
}

struct TempFile {
  Fd fd;
  std::string name;
};

// A new file in `dir` under a name derived from `base` with 64 random bits, so that nobody can
// plant anything at it beforehand (and O_EXCL|O_NOFOLLOW refuses whatever is there anyway).
Result<TempFile> create_temp(const Dir& dir, std::string_view base, mode_t mode) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t bits = 0;
    if (::getrandom(&bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits)) {
      return errno_fail("cannot make a temporary name beside", dir.child(base), errno);
    }
    std::string name = fmt::format(".{}.{:016x}.sparkdoc-tmp", base, bits);
    Fd fd(::openat(dir.fd.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   mode));
    if (fd.valid()) return TempFile{std::move(fd), std::move(name)};
    if (errno != EEXIST) return errno_fail("cannot create", dir.child(name), errno);
  }
  return fail(fmt::format("cannot create a temporary file beside {}", dir.child(base)));
}

// The folder of `path`, opened to make a file in it; errors name the file ("cannot write P").
Result<Dir> folder_of(const std::string& path, const std::string& failing) {
  std::string parent = parent_path(path);
  Fd fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno_fail(failing, path, errno);
  return Dir{std::move(fd), std::move(parent)};
}

// A new file beside `path`, to be renamed over it; an existing `path` that is not a regular
// file is refused first.
struct Beside {
  Dir dir;
  std::string entry;  // the target's name in dir
  TempFile temp;
};

Result<Beside> temp_beside(const std::string& path, mode_t mode, const std::string& failing) {
  if (auto ok = replaceable(AT_FDCWD, path, path); !ok)
    return tl::unexpected(std::move(ok.error()));
  auto dir = folder_of(path, failing);
  if (!dir) return tl::unexpected(std::move(dir.error()));
  std::string entry(file_name(path));
  auto temp = create_temp(*dir, entry, mode);
  if (!temp) return tl::unexpected(std::move(temp.error()));
  return Beside{std::move(*dir), std::move(entry), std::move(*temp)};
}

// Renames the new file `temp` over `entry` in the folder `dir` (removing it when that fails): 0,
// or the errno.
int put_in_place(int dir, const std::string& temp, const std::string& entry) {
  if (::renameat(dir, temp.c_str(), dir, entry.c_str()) == 0) return 0;
  int err = errno;
  ::unlinkat(dir, temp.c_str(), 0);
  return err;
}

// 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace

Why why_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Why::kAbsent;
    case EACCES:
    case EPERM:
      return Why::kNoPermission;
    default:
      return Why::kError;
  }
}

Root::Root(std::string prefix) : prefix_(std::move(prefix)) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
}

std::string Root::path(std::string_view absolute) const {
  if (prefix_.empty()) return std::string(absolute);
  std::string out = prefix_;
  if (absolute.empty() || absolute.front() != '/') out += '/';
  out += absolute;
  return out;
}

Result<std::string> read_text(const std::string& path, size_t max_bytes) {
  auto fd = open_regular_file(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  // A file whose size already says too much is refused before a byte is read (a 256 MiB cap
  // read to the end first costs seconds and the memory); /proc files say 0 and are read.
  struct stat st {};
  if (::fstat(fd->get(), &st) == 0 && st.st_size > 0 &&
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    return fail(fmt::format("{} is larger than {} bytes ({} bytes)", path, max_bytes, st.st_size));
  }
  std::string out;
  if (st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_fail("cannot read", path, errno);
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return fail(fmt::format("{} is larger than {} bytes", path, max_bytes));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {

// Calls visit(dir, entry) for every entry of the folder at `path` but "." and "..".
template <class Visit>
Result<void> for_each_entry(const std::string& path, const Visit& visit) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return errno_fail("cannot list", path, errno);
  while (const struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    visit(dir, *e);
  }
  ::closedir(dir);
  return {};
}

EntryType type_of_mode(mode_t mode) {
  if (S_ISREG(mode)) return EntryType::kFile;
  if (S_ISDIR(mode)) return EntryType::kDir;
  if (S_ISLNK(mode)) return EntryType::kLink;
  return EntryType::kOther;
}

// The entry's type from the listing, else from an lstat of it (relative to the folder's own
// descriptor); nullopt when it is gone by then.
std::optional<EntryType> type_of_entry(DIR* dir, const struct dirent& e) {
  switch (e.d_type) {
    case DT_REG:
      return EntryType::kFile;
    case DT_DIR:
      return EntryType::kDir;
    case DT_LNK:
      return EntryType::kLink;
    case DT_UNKNOWN:
      break;
    default:
      return EntryType::kOther;
  }
  struct stat st {};
  if (::fstatat(::dirfd(dir), e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return type_of_mode(st.st_mode);
}

}  // namespace

Result<std::vector<std::string>> list_dir(const std::string& path) {
  std::vector<std::string> names;
  auto listed =
      for_each_entry(path, [&](DIR*, const struct dirent& e) { names.emplace_back(e.d_name); });
  if (!listed) return tl::unexpected(std::move(listed.error()));
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<DirEntry>> list_dir_entries(const std::string& path) {
  std::vector<DirEntry> entries;
  auto listed = for_each_entry(path, [&](DIR* dir, const struct dirent& e) {
    if (auto type = type_of_entry(dir, e)) entries.push_back(DirEntry{e.d_name, *type});
  });
  if (!listed) return tl::unexpected(std::move(listed.error()));
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

Result<std::string> read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return errno_fail("cannot read link", path, errno);
  return std::string(buf, static_cast<size_t>(n));
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

bool running_privileged() {
  return ::geteuid() == 0 || ::getauxval(AT_SECURE) != 0;
}

Result<void> check_root_may_trust(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    return fail(why_from_errno(errno), fmt::format("{}: {}", path, std::strerror(errno)));
  }
  std::string real(resolved);
  std::free(resolved);
  std::string parent = real.substr(0, std::max<size_t>(real.rfind('/'), 1));
  for (const std::string& p : {real, parent}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      return fail(why_from_errno(errno), fmt::format("{}: {}", p, std::strerror(errno)));
    }
    if (st.st_uid != 0) {
      return fail(Why::kNoPermission, fmt::format("{} belongs to uid {}, not root", p, st.st_uid));
    }
    // A folder others may write but with the sticky bit (/tmp) still lets them replace only
    // their own names; the file itself belongs to root (checked first).
    bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 && p == parent;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_dir) {
      return fail(Why::kNoPermission,
                  fmt::format("{} is writable by {}", p,
                              (st.st_mode & S_IWOTH) != 0 ? "everyone" : "its group"));
    }
  }
  return {};
}

std::string_view file_type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a folder";
    case S_IFLNK:
      return "a symbolic link";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    default:
      return "a file of unknown type";
  }
}

Result<Fd> open_regular_file(const std::string& path, int flags) {
  // O_PATH only names the file: no device driver's open runs and no FIFO waits for a writer.
  Fd named(::open(path.c_str(), O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW)));
  if (!named.valid()) return errno_fail("cannot open", path, errno);
  struct stat checked {};
  if (::fstat(named.get(), &checked) != 0) return errno_fail("cannot stat", path, errno);
  if (!S_ISREG(checked.st_mode)) return not_regular(path, checked.st_mode);
  // The magic link reopens the very file checked, whatever is at the path by now. O_NOFOLLOW
  // would refuse the magic link itself; O_NONBLOCK and O_NOCTTY matter only on the fallback,
  // where the path is opened again.
  const int open_flags = (flags & ~O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  const std::string self = fmt::format("/proc/self/fd/{}", named.get());
  Fd fd(::open(self.c_str(), open_flags));
  if (!fd.valid() && errno == ENOENT)
    fd = Fd(::open(path.c_str(), open_flags | (flags & O_NOFOLLOW)));
  if (!fd.valid()) return errno_fail("cannot open", path, errno);
  struct stat opened {};
  if (::fstat(fd.get(), &opened) != 0) return errno_fail("cannot stat", path, errno);
  if (!S_ISREG(opened.st_mode)) return not_regular(path, opened.st_mode);
  if (opened.st_dev != checked.st_dev || opened.st_ino != checked.st_ino) {
    return fail(fmt::format("{} was replaced while it was being opened; run again", path));
  }
  // F_SETFL sets only the status flags: clearing O_NONBLOCK keeps O_APPEND and O_DIRECT.
  if (::fcntl(fd.get(), F_SETFL, flags & (O_APPEND | O_DIRECT | O_NOATIME)) != 0) {
    return errno_fail("cannot set the flags of", path, errno);
  }
  return fd;
}

std::string Dir::child(std::string_view name) const {
  if (path.empty() || path == ".") return std::string(name);
  if (path.back() == '/') return path + std::string(name);
  return path + "/" + std::string(name);
}

Result<Dir> open_dir(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno_fail("cannot open the folder", path, errno);
  return Dir{std::move(fd), path};
}

Result<Dir> open_private_dir(const Dir& parent, std::string_view name, unsigned euid) {
  const std::string path = parent.child(name);
  const std::string entry(name);
  Fd fd(::openat(parent.fd.get(), entry.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    struct stat st {};
    if ((err == ELOOP || err == ENOTDIR) &&
        ::fstatat(parent.fd.get(), entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      return fail(fmt::format("{} is {}, not a folder", path, file_type_name(st.st_mode)));
    }
    return errno_fail("cannot open the folder", path, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_fail("cannot stat", path, errno);
  if (st.st_uid != euid) {
    return fail(fmt::format("{} belongs to uid {}, not to uid {}, which runs sparkdoc", path,
                            st.st_uid, euid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return fail(
        fmt::format("{} is a folder others can write (mode {:04o})", path, st.st_mode & 07777));
  }
  return Dir{std::move(fd), path};
}

Result<Dir> open_or_make_private_dir(const Dir& parent, std::string_view name, mode_t mode) {
  const unsigned euid = ::geteuid();
  auto dir = open_private_dir(parent, name, euid);
  if (dir || dir.error().why != Why::kAbsent) return dir;
  auto made = make_new_dir(parent, name, mode, false);
  if (!made) {
    if (auto again = open_private_dir(parent, name, euid)) return again;
  }
  return made;
}

Result<Dir> make_new_dir(const Dir& parent, std::string_view name, mode_t mode, bool numbered) {
  constexpr int kMaxNumber = 100;
  for (int n = 1; n <= (numbered ? kMaxNumber : 1); ++n) {
    const std::string entry = n == 1 ? std::string(name) : fmt::format("{}-{}", name, n);
    const std::string path = parent.child(entry);
    if (::mkdirat(parent.fd.get(), entry.c_str(), mode) != 0) {
      if (errno == EEXIST && numbered) continue;
      return errno_fail("cannot make the folder", path, errno);
    }
    Fd fd(
        ::openat(parent.fd.get(), entry.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return errno_fail("cannot open the folder", path, errno);
    // In a parent others can write, the new folder could be swapped for one of theirs between
    // the two calls: what was opened must be the folder this process made.
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return errno_fail("cannot stat", path, errno);
    if (st.st_uid != ::geteuid()) {
      return fail(
          fmt::format("{} was replaced as it was made; name a folder only you can write", path));
    }
    return Dir{std::move(fd), path};
  }
  return fail(fmt::format("{} and the numbered names after it up to -{} are all taken",
                          parent.child(name), kMaxNumber));
}

Result<bool> is_empty_dir(const Dir& dir) {
  // A descriptor of its own: readdir moves the offset, which dir.fd must keep.
  int own = ::openat(dir.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (own < 0) return errno_fail("cannot list", dir.path, errno);
  DIR* listing = ::fdopendir(own);
  if (listing == nullptr) {
    int err = errno;
    ::close(own);
    return errno_fail("cannot list", dir.path, err);
  }
  bool empty = true;
  while (struct dirent* e = ::readdir(listing)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  ::closedir(listing);
  return empty;
}

Result<Fd> create_file(const Dir& dir, std::string_view name, int flags, mode_t mode) {
  const std::string entry(name);
  Fd fd(::openat(dir.fd.get(), entry.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, mode));
  if (!fd.valid()) return create_failure(dir.fd.get(), entry, dir.child(name), errno);
  return fd;
}

Result<Fd> create_file(const std::string& path, int flags, mode_t mode) {
  auto dir = folder_of(path, "cannot create");
  if (!dir) return tl::unexpected(std::move(dir.error()));
  return create_file(*dir, file_name(path), flags, mode);
}

Result<void> write_new_file(const Dir& dir, std::string_view name, std::string_view contents,
                            mode_t mode) {
  auto fd = create_file(dir, name, 0, mode);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  if (int err = write_all(fd->get(), contents); err != 0) {
    ::unlinkat(dir.fd.get(), std::string(name).c_str(), 0);
    return errno_fail("cannot write", dir.child(name), err);
  }
  return {};
}

Result<Fd> replace_file(const std::string& path, mode_t mode) {
  auto beside = temp_beside(path, mode, "cannot replace");
  if (!beside) return tl::unexpected(std::move(beside.error()));
  if (int err = put_in_place(beside->dir.fd.get(), beside->temp.name, beside->entry); err != 0)
    return errno_fail("cannot replace", path, err);
  return std::move(beside->temp.fd);
}

Result<void> write_file(const std::string& path, std::string_view contents, mode_t mode) {
  auto dir = folder_of(path, "cannot write");
  if (!dir) return tl::unexpected(std::move(dir.error()));
  return write_file_in(*dir, file_name(path), contents, mode);
}

Result<void> write_file_in(const Dir& dir, std::string_view name, std::string_view contents,
                           mode_t mode) {
  const std::string entry(name);
  if (auto ok = replaceable(dir.fd.get(), entry, dir.child(name)); !ok) {
    return tl::unexpected(std::move(ok.error()));
  }
  auto temp = create_temp(dir, entry, mode);
  if (!temp) return tl::unexpected(std::move(temp.error()));
  int err = write_all(temp->fd.get(), contents);
  if (err != 0) {
    ::unlinkat(dir.fd.get(), temp->name.c_str(), 0);
  } else {
    err = put_in_place(dir.fd.get(), temp->name, entry);
  }
  if (err != 0) return errno_fail("cannot write", dir.child(name), err);
  return {};
}

Result<Fd> open_private_file(const Dir& dir, std::string_view name, size_t max_bytes,
                             unsigned euid) {
  const std::string entry(name);
  const std::string path = dir.child(name);
  // O_NONBLOCK: a FIFO planted at the name opens without waiting and is refused by its type.
  Fd fd(::openat(dir.fd.get(), entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) return fail(fmt::format("{} is a symbolic link, not a file", path));
    return errno_fail("cannot open", path, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_fail("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  if (st.st_uid != euid) {
    return fail(Why::kNoPermission,
                fmt::format("{} belongs to uid {}, not to uid {}", path, st.st_uid, euid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return fail(Why::kNoPermission, fmt::format("{} is a file others can write (mode {:04o})", path,
                                                st.st_mode & 07777));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return fail(fmt::format("{} is larger than {} bytes ({} bytes)", path, max_bytes, st.st_size));
  }
  return fd;
}

Result<std::string> read_private_file(const Dir& dir, std::string_view name, size_t max_bytes,
                                      unsigned euid) {
  auto fd = open_private_file(dir, name, max_bytes, euid);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  const std::string path = dir.child(name);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return errno_fail("cannot stat", path, errno);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd->get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_fail("cannot read", path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace sparkdoc
