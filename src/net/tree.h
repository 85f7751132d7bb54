// Walking a machine's tree through a Root the way the machine would: /sys/class/net/<if> is a
// symbolic link into /sys/devices, and a fixture tree holds the same relative links (or plain
// folders). Links are resolved by hand with the Root as "/": a relative target against the
// link's folder, an absolute one from the Root, ".." never above it, so no link leads out of a
// fixture tree. Machine paths ("/sys/class/net/lo") go in and come out, never root-prefixed.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::net {

// Links followed per resolution before it gives up (the kernel's own limit is 40).
inline constexpr int kMaxLinks = 40;

// `machine_path` with every link in it resolved inside `root`. Errors: Why::kAbsent when a
// component is missing, kError for a loop or a path too deep.
Result<std::string> resolve(const Root& root, std::string_view machine_path);

// The machine path of `name` in folder `dir`.
std::string child(std::string_view dir, std::string_view name);

// A folder of the machine by its resolved path: reads in it resolve nothing again, so a
// folder of 255 GID files costs one resolution, not 255. It keeps its own copy of the Root.
class Folder {
 public:
  // Resolves `machine_path`; an error when it is not there or not a folder.
  static Result<Folder> open(const Root& root, std::string_view machine_path);
  // The folder at `relative` (one or more names) from this one, resolved from here.
  Result<Folder> sub(std::string_view relative) const;

  // The whole small regular file `name` (a link at the name resolved inside the root, as any
  // other; what it leads to must be a regular file). sysfs answers
  // EINVAL for a value the driver has not got (the speed of a link that is down, the type of
  // an empty GID slot): that is Why::kNotSupported, not an error.
  Result<std::string> read(std::string_view name, size_t max_bytes = 4096) const;
  // read() as a recorded value (clean_value), "" when it cannot be read.
  std::string value(std::string_view name) const;
  // Every regular file in this folder with its text, by name; at most `max_files` of them, each
  // cut at `max_bytes`. One open folder and four calls a file, for tables of hundreds of
  // one-line files (a GID table): an entry the folder lists as anything but a regular file is
  // never opened, a file the kernel cannot read (EINVAL) is left out.
  std::vector<std::pair<std::string, std::string>> read_files(size_t max_files,
                                                              size_t max_bytes = 256) const;
  // The names in this folder, sorted; at most `max_names` (the rest dropped).
  Result<std::vector<std::string>> names(size_t max_names) const;
  // The last component of the target of the link `name` ("mlx5_core" for a driver link to
  // ../../../../bus/pci/drivers/mlx5_core); the target need not exist.
  Result<std::string> link_name(std::string_view name) const;

  const std::string& path() const { return path_; }

 private:
  Folder(Root root, std::string path) : root_(std::move(root)), path_(std::move(path)) {}
  Root root_;
  std::string path_;
};

// Every entry of a class folder (/sys/class/net, /sys/class/infiniband) read by
// `read_one(root, name) -> Result<T>`, by name; at most `max_entries`. An entry read_one
// refuses (a plain file such as bonding_masters) is left out. Absent without the folder.
template <class T, class ReadOne>
Result<std::vector<T>> read_class(const Root& root, std::string_view class_dir, size_t max_entries,
                                  ReadOne read_one) {
  auto dir = Folder::open(root, class_dir);
  if (!dir) return tl::unexpected(std::move(dir.error()));
  auto names = dir->names(max_entries);
  if (!names) return tl::unexpected(std::move(names.error()));
  std::vector<T> out;
  for (const std::string& name : *names) {
    if (auto entry = read_one(root, name)) out.push_back(std::move(*entry));
  }
  return out;
}

}  // namespace sparkdoc::net
