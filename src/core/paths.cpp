#include "core/paths.h"

#include <sys/stat.h>

#include <deque>
#include <vector>

#include "core/strings.h"

namespace sparkdoc {

std::string normalize_path(std::string_view path) {
  if (path.empty()) return "";
  const bool absolute = path.front() == '/';
  std::vector<std::string_view> kept;
  for (std::string_view part : split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!kept.empty() && kept.back() != "..") {
        kept.pop_back();
      } else if (!absolute) {
        kept.push_back(part);
      }
      continue;
    }
    kept.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) out += '/';
    out += kept[i];
  }
  return out.empty() ? "." : out;
}

std::string parent_path(std::string_view path) {
  std::string clean = normalize_path(path);
  size_t slash = clean.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return clean.substr(0, slash);
}

std::string join_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string_view file_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<std::string> resolve_symlinks(const Root& root, std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  constexpr int kMaxLinks = 40;  // glibc's MAXSYMLINKS
  int links = 0;
  std::deque<std::string> pending;
  for (std::string_view part : split(path, '/')) pending.emplace_back(part);
  std::string done;  // resolved so far; "" stands for "/"
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      size_t slash = done.rfind('/');
      done.erase(slash == std::string::npos ? 0 : slash);
      continue;
    }
    std::string next = done + "/" + part;
    struct stat st;
    if (::lstat(root.path(next).c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) {
      done = std::move(next);
      continue;
    }
    if (++links > kMaxLinks) return std::nullopt;
    auto target = read_link(root.path(next));
    if (!target || target->empty()) return std::nullopt;
    if (target->front() == '/') done.clear();
    std::vector<std::string_view> parts = split(*target, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.emplace_front(*it);
  }
  return done.empty() ? "/" : done;
}

}  // namespace sparkdoc
