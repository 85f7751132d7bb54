// File access through a Root: "/" on the live machine, a fixture folder in tests.
// A path prefix is the cheapest fake environment; probes never open absolute paths directly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sparkdoc {

class Root {
 public:
  Root() = default;                        // the live machine
  explicit Root(std::string prefix);       // a fixture tree; "" or "/" means live
  // Maps an absolute machine path ("/proc/meminfo") to the path to open.
  std::string path(std::string_view absolute) const;
  bool live() const { return prefix_.empty(); }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
};

// Reads a whole (small) file. Procfs files report size 0, so this reads until EOF, up to
// max_bytes; more is an error rather than a silent truncation. Errors carry Why (absent for
// ENOENT, no_permission for EACCES/EPERM).
// The reason an errno gives: absent for ENOENT/ENOTDIR, no_permission for EACCES/EPERM,
// error for everything else.
Why why_from_errno(int err);

Result<std::string> read_text(const std::string& path, size_t max_bytes = 4 << 20);
bool exists(const std::string& path);
bool is_dir(const std::string& path);
// Names in a directory, sorted; "." and ".." excluded.
Result<std::vector<std::string>> list_dir(const std::string& path);
// Target of a symbolic link.
Result<std::string> read_link(const std::string& path);

}  // namespace sparkdoc
