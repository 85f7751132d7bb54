#include "core/cache_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sparkdoc {
namespace {

constexpr mode_t kCacheFolderMode = 0700;

// mkdir -p with `mode` for each folder made; the path is the user's own, links and all.
Result<void> make_folders(const std::string& path, mode_t mode) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return fail(why_from_errno(errno),
                  fmt::format("cannot make {}: {}", prefix, std::strerror(errno)));
    }
    if (slash == std::string::npos) return {};
  }
}

}  // namespace

Result<std::string> cache_root_from_env() {
  if (const char* c = std::getenv("SPARKDOC_CACHE"); c != nullptr && c[0] != '\0') {
    return std::string(c);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] == '/') {
    return std::string(x) + "/sparkdoc";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] != '\0') {
    return std::string(h) + "/.cache/sparkdoc";
  }
  return fail("no folder for sparkdoc's cache: set SPARKDOC_CACHE (or HOME)");
}

Result<Dir> open_cache_root(const std::string& root) {
  if (!is_dir(root)) {
    if (auto made = make_folders(root, kCacheFolderMode); !made) {
      return tl::unexpected(std::move(made.error()));
    }
  }
  auto dir = open_dir(root);
  if (!dir) return dir;
  struct stat st {};
  if (::fstat(dir->fd.get(), &st) != 0) {
    return fail(why_from_errno(errno),
                fmt::format("cannot stat {}: {}", root, std::strerror(errno)));
  }
  if (st.st_uid != ::geteuid()) {
    return fail(Why::kNoPermission,
                fmt::format("{} belongs to uid {}, not to uid {}, which runs sparkdoc", root,
                            st.st_uid, ::geteuid()));
  }
  return dir;
}

}  // namespace sparkdoc
