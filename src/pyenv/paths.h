// Machine-path helpers for the pyenv probe. Paths are plain strings in the machine's namespace
// ("/usr/bin/python3"); anything that touches the file system maps them through a Root.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/fs.h"

namespace sparkdoc::pyenv {

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

}  // namespace sparkdoc::pyenv
