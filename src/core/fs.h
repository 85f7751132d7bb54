// File access through a Root: "/" on the live machine, a fixture folder in tests.
// A path prefix is the cheapest fake environment; probes never open absolute paths directly.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace sparkdoc {

class Root {
 public:
  Root() = default;                   // the live machine
  explicit Root(std::string prefix);  // a fixture tree; "" or "/" means live
  // Maps an absolute machine path ("/proc/meminfo") to the path to open.
  std::string path(std::string_view absolute) const;
  bool live() const { return prefix_.empty(); }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
};

// The reason an errno gives: absent for ENOENT/ENOTDIR, no_permission for EACCES/EPERM,
// error for everything else.
Why why_from_errno(int err);

// Reads a whole (small) regular file, opened by open_regular_file (so a FIFO or a device at the
// path is refused, never opened). Procfs files report size 0, so this reads until EOF, up to
// max_bytes; more is an error rather than a silent truncation. Errors carry Why (absent for
// ENOENT, no_permission for EACCES/EPERM).
Result<std::string> read_text(const std::string& path, size_t max_bytes = 4 << 20);
bool exists(const std::string& path);
bool is_dir(const std::string& path);
// Names in a directory, sorted; "." and ".." excluded.
Result<std::vector<std::string>> list_dir(const std::string& path);
// An entry's type, not following a link (a link to a folder is kLink).
enum class EntryType { kFile, kDir, kLink, kOther };
struct DirEntry {
  std::string name;
  EntryType type = EntryType::kOther;
};
// The entries of a directory with their types, sorted by name; "." and ".." excluded. Types
// come from the listing itself (readdir's d_type) with no lookup of each entry, which after a
// reboot is a read from disk per entry; where the file system leaves the type out, the entry
// is lstat'ed, and one gone by then is left out.
Result<std::vector<DirEntry>> list_dir_entries(const std::string& path);
// Target of a symbolic link.
Result<std::string> read_link(const std::string& path);

// ---- Opening files that came from elsewhere ----
//
// sparkdoc often runs as root over files that a user, a download or a Python environment put
// there. Reads go through open_regular_file, which never opens anything but a regular file (a
// blocking open(2) of a FIFO waits for a writer forever; opening a device can have effects of its
// own). Files sparkdoc makes go through create_file, replace_file or write_file, which never write
// through a symbolic link and never truncate a file in place; folders through make_new_dir and
// open_private_dir.

// ---- What a privileged process takes from its user ----
//
// Test hooks (a library named by SPARKDOC_NVML_LIBRARY, a --root folder) are the user's choice,
// and under `sudo -E` a root process inherits the user's environment: a library loaded from
// there would run the user's code as root, and a --root tree of the user's links would steer
// root's writes. A privileged process takes such a path only when root owns it and no one else
// can write it or the folder holding it.

// True when the process has more privilege than its real user: effective uid 0, or started
// set-uid or set-gid (AT_SECURE).
bool running_privileged();
// Whether a privileged process may take `path` (a file or a folder) from its user: the path and
// its parent folder, with links followed, are owned by root and not writable by group or others.
// The error says which and why ("/home/u/libnvidia-ml.so.1 belongs to uid 1000, not root").
Result<void> check_root_may_trust(const std::string& path);

// An open file descriptor, closed when this goes. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Hands the descriptor over to the caller, who closes it.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// What a file of this st_mode is, for messages: "a FIFO", "a character device", "a symbolic
// link", "a folder", ...
std::string_view file_type_name(mode_t mode);

// Opens an existing regular file. The path is first opened O_PATH, which opens no device and
// waits on no FIFO; its type is checked with fstat(2), and only a regular file is then opened
// for real, through /proc/self/fd (the file checked is the file opened; without /proc it is
// opened O_NONBLOCK|O_NOCTTY and checked after). `flags`: the access mode plus O_NOFOLLOW,
// O_DIRECT or O_APPEND as wanted; O_CLOEXEC always; never O_CREAT or O_TRUNC. /proc and /sys
// files are regular files (of size 0) and open as usual. Errors name the path, and the type of
// anything else ("/x/RECORD is a FIFO, not a regular file"); Why as why_from_errno.
Result<Fd> open_regular_file(const std::string& path, int flags = O_RDONLY);

// An open folder and the path it was opened by (for messages). Names made through it land in
// this folder even when its path is renamed or replaced meanwhile (the *at(2) calls).
struct Dir {
  Fd fd;
  std::string path;
  // path + "/" + name.
  std::string child(std::string_view name) const;
};

// A folder by a path the caller was given (links followed: the path is the user's choice).
Result<Dir> open_dir(const std::string& path);

// An existing folder `name` in `parent` trusted with files this process makes: a real folder (a
// link is refused, not followed), owned by `euid`, writable by neither group nor others, so no
// other user can plant or swap anything in it. Why::kAbsent when there is nothing at the name.
Result<Dir> open_private_dir(const Dir& parent, std::string_view name, unsigned euid);

// open_private_dir's folder, or a new one made with `mode` when there is nothing at the name
// (another process making it meanwhile is taken as made).
Result<Dir> open_or_make_private_dir(const Dir& parent, std::string_view name, mode_t mode);

// Makes a new folder `name` in `parent` (mkdirat(2): never one that was there before, a link
// included) and opens it. With `numbered`, a taken name is tried again as name-2, name-3, ...,
// up to name-100; the Dir's path says which.
Result<Dir> make_new_dir(const Dir& parent, std::string_view name, mode_t mode, bool numbered);

// Whether a folder holds nothing but "." and "..".
Result<bool> is_empty_dir(const Dir& dir);

// Creates the new file `name` in `dir` for writing: O_CREAT|O_EXCL|O_NOFOLLOW, so neither an
// existing file nor a link planted at the name is written through. `flags` may add O_APPEND.
Result<Fd> create_file(const Dir& dir, std::string_view name, int flags = 0, mode_t mode = 0644);
// The same by path (its folder opened as given).
Result<Fd> create_file(const std::string& path, int flags = 0, mode_t mode = 0644);
// Creates the new file `name` in `dir` as create_file does and writes `contents` into it; a
// failed write removes the file again.
Result<void> write_new_file(const Dir& dir, std::string_view name, std::string_view contents,
                            mode_t mode = 0644);

// A new empty file put in place of `path` at once (made beside it under a name nobody can
// guess, then renamed over it): what was there is replaced, never written through or truncated.
// An existing `path` that is not a regular file (a link, a FIFO, a device, a folder) is refused
// and left alone.
Result<Fd> replace_file(const std::string& path, mode_t mode = 0644);

// Writes `contents` to the file `name` in `dir` as write_file does: a new file under a name
// nobody can guess, renamed over `name` only once every byte is written, so that readers and
// other writers at once see one whole file or another (the last rename wins), never a torn
// one. An existing `name` that is not a regular file is refused and left alone.
Result<void> write_file_in(const Dir& dir, std::string_view name, std::string_view contents,
                           mode_t mode = 0644);

// Reads the file `name` in `dir` whole when it is a regular file (a link at the name is
// refused, not followed), owned by `euid`, writable by neither group nor others, and no larger
// than `max_bytes`: a file this process may take as its own earlier output. Errors say which
// of these failed; Why::kAbsent when there is nothing at the name.
Result<std::string> read_private_file(const Dir& dir, std::string_view name, size_t max_bytes,
                                      unsigned euid);
// The same file opened for reading, after the same checks, for a reader that streams it.
Result<Fd> open_private_file(const Dir& dir, std::string_view name, size_t max_bytes,
                             unsigned euid);

// Writes `contents` to `path` as replace_file does, renamed into place only once every byte is
// written: a reader sees the old file or the whole new one, and a failed write leaves no file.
Result<void> write_file(const std::string& path, std::string_view contents, mode_t mode = 0644);

}  // namespace sparkdoc
