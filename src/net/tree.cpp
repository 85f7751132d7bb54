#include "net/tree.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

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
  const std::string at = child(path_, name);
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
