// Machine-path helpers for the probes. Paths are plain strings in the machine's namespace
// ("/usr/bin/python3"); anything that touches the file system maps them through a Root.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/fs.h"

namespace sparkdoc {

// Debian's multiarch triplet of the machine sparkdoc was built for: the name of the
// /usr/lib/<triplet> folder where the driver's libcuda.so.1 and apt's CUDA libraries live.
constexpr std::string_view host_multiarch() {
#if defined(__aarch64__)
  return "aarch64-linux-gnu";
#elif defined(__x86_64__)
  return "x86_64-linux-gnu";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
  return "powerpc64le-linux-gnu";
#else
  return "";
#endif
}

// Lexical clean-up: collapses "//", "." and "..", drops a trailing '/'. "" stays "".
std::string normalize_path(std::string_view path);
// "/a/b/c" -> "/a/b"; "/a" -> "/"; "/" -> "/".
std::string parent_path(std::string_view path);
// "/a/b" + "c" -> "/a/b/c" (no normalisation).
std::string join_path(std::string_view dir, std::string_view name);
// The last component: "/usr/bin/python3.12" -> "python3.12".
std::string_view file_name(std::string_view path);

// Resolves every symbolic link of an absolute machine path, as realpath(3) does, reading
// links inside `root` (an absolute link target stays inside the fixture tree). nullopt when a
// component does not exist, the path is relative, or links loop (more than 40 followed).
std::optional<std::string> resolve_symlinks(const Root& root, std::string_view path);

}  // namespace sparkdoc
