#include "core/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkdoc {
namespace {

tl::unexpected<Error> errno_fail(const std::string& what, const std::string& path, int err) {
  return fail(why_from_errno(err), fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

}  // namespace

Why why_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Why::kAbsent;
    case EACCES:
    case EPERM: return Why::kNoPermission;
    default: return Why::kError;
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_fail("cannot open", path, errno);
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return errno_fail("cannot read", path, err);
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return fail(fmt::format("{} is larger than {} bytes", path, max_bytes));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
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

Result<std::vector<std::string>> list_dir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return errno_fail("cannot list", path, errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return errno_fail("cannot read link", path, errno);
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace sparkdoc
