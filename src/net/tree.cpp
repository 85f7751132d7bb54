#include "net/tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "core/strings.h"
#include "net/values.h"

namespace sparkdoc::net {
namespace {

// Deeper than any real sysfs path; bounds the work on a fixture made to loop.
constexpr size_t kMaxComponents = 256;

std::string joined(const std::vector<std::string>& parts) {
  if (parts.empty()) return "/";
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out;
}

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> parts;
  for (std::string_view part : split(path, '/')) {
    if (!part.empty()) parts.emplace_back(part);
  }
  return parts;
}

// `relative` resolved from `base`, a path already resolved (so not checked again).
Result<std::string> resolve_from(const Root& root, std::string_view base,
                                 std::string_view relative) {
  std::vector<std::string> done = components(base);
  std::vector<std::string> first = components(relative);
  std::deque<std::string> pending(first.begin(), first.end());
  int links = 0;
  size_t steps = 0;
  while (!pending.empty()) {
    if (++steps > kMaxComponents * 4 || done.size() >= kMaxComponents) {
      return fail(fmt::format("{}: the path is too deep", child(base, relative)));
    }
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(std::move(part));
    const std::string at = joined(done);
    struct stat st {};
    if (::lstat(root.path(at).c_str(), &st) != 0) {
      int err = errno;
      return fail(why_from_errno(err), fmt::format("{}: {}", at, std::strerror(err)));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    if (++links > kMaxLinks) return fail(fmt::format("{}: too many levels of links", at));
    auto target = read_link(root.path(at));
    if (!target) return tl::unexpected(std::move(target.error()));
    done.pop_back();
    if (!target->empty() && target->front() == '/') done.clear();
    std::vector<std::string> more = components(*target);
    pending.insert(pending.begin(), more.begin(), more.end());
  }
  return joined(done);
}

}  // namespace

std::string child(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

Result<std::string> resolve(const Root& root, std::string_view machine_path) {
  return resolve_from(root, "/", machine_path);
}

Result<Folder> Folder::open(const Root& root, std::string_view machine_path) {
  return Folder(root, "/").sub(machine_path);
}

Result<Folder> Folder::sub(std::string_view relative) const {
  auto path = resolve_from(root_, path_, relative);
  if (!path) return tl::unexpected(std::move(path.error()));
  if (!is_dir(root_.path(*path))) {
    return fail(Why::kAbsent, fmt::format("{} is not a folder", *path));
  }
  return Folder(root_, std::move(*path));
}

Result<std::string> Folder::read(std::string_view name, size_t max_bytes) const {
  // A link at the name (an /etc file managed by alternatives) is followed inside the root too.
  auto resolved = resolve_from(root_, path_, name);
  if (!resolved) return tl::unexpected(std::move(resolved.error()));
  const std::string& at = *resolved;
  auto fd = open_regular_file(root_.path(at), O_RDONLY | O_NOFOLLOW);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      return fail(err == EINVAL ? Why::kNotSupported : why_from_errno(err),
                  fmt::format("cannot read {}: {}", at, std::strerror(err)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return fail(fmt::format("{} is larger than {} bytes", at, max_bytes));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string Folder::value(std::string_view name) const {
  auto text = read(name);
  return text ? clean_value(*text) : std::string();
}

std::vector<std::pair<std::string, std::string>> Folder::read_files(size_t max_files,
                                                                    size_t max_bytes) const {
  std::vector<std::pair<std::string, std::string>> out;
  int dir_fd = ::open(root_.path(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return out;
  DIR* listing = ::fdopendir(dir_fd);
  if (listing == nullptr) {
    ::close(dir_fd);
    return out;
  }
  std::string buf(max_bytes, '\0');
  while (struct dirent* e = ::readdir(listing)) {
    if (out.size() >= max_files) break;
    // sysfs, tmpfs and ext4 fill d_type; a file system that does not is read through read().
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
    if (e->d_type == DT_UNKNOWN) {
      if (auto text = read(e->d_name, max_bytes)) out.emplace_back(e->d_name, std::move(*text));
      continue;
    }
    Fd fd(::openat(dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n >= 0) out.emplace_back(e->d_name, buf.substr(0, static_cast<size_t>(n)));
  }
  ::closedir(listing);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> Folder::names(size_t max_names) const {
  auto names = list_dir(root_.path(path_));
  if (!names) return tl::unexpected(std::move(names.error()));
  if (names->size() > max_names) names->resize(max_names);
  return names;
}

Result<std::string> Folder::link_name(std::string_view name) const {
  auto target = read_link(root_.path(child(path_, name)));
  if (!target) return tl::unexpected(std::move(target.error()));
  std::string_view t = *target;
  while (!t.empty() && t.back() == '/') t.remove_suffix(1);
  size_t slash = t.rfind('/');
  return std::string(slash == std::string_view::npos ? t : t.substr(slash + 1));
}

}  // namespace sparkdoc::net
