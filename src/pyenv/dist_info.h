// Installed distributions, read from the *.dist-info and *.egg-info folders of a site-packages
// folder. Only the watched names are recorded (the one table in dist_info.cpp): the snapshot
// leaves the machine, and a full package list says more about a user than the checks need.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/pyenv.h"

namespace sparkdoc::pyenv {

// True for a normalized name sparkdoc records: the ML stack the checks judge (torch, triton,
// transformers, ...) and every "nvidia-*" wheel.
bool is_watched(std::string_view normalized_name);

struct NameVersion {
  std::string name;  // as written (not normalized)
  std::string version;
  bool operator==(const NameVersion&) const = default;
};

// The name and version a metadata folder's name states:
//   "torch-2.9.0a0+145a3a7.nv25.10.dist-info"        -> torch, 2.9.0a0+145a3a7.nv25.10
//   "nvidia_cuda_runtime_cu12-12.8.90.dist-info"     -> nvidia_cuda_runtime_cu12, 12.8.90
//   "flash_attn-2.7.4.post1-py3.12.egg-info"         -> flash_attn, 2.7.4.post1
// nullopt when it is not such a folder or its name is ambiguous (a dist-info name must have
// exactly one '-'; the version must start with a digit): then read the metadata file instead.
std::optional<NameVersion> parse_dist_folder(std::string_view folder);

// Name: and Version: from the header block of METADATA or PKG-INFO text (RFC 822 style, up to
// the first blank line). nullopt when either is missing.
std::optional<NameVersion> parse_metadata(std::string_view text);

// The watched distributions of one site-packages folder (a machine path, opened through
// root), in name order. The folder is listed once; a metadata file is read only for folders
// whose name is ambiguous. pip's half-removed "~name" folders are skipped. When two folders
// give the same name (an interrupted or mixed install), both are returned.
Result<std::vector<Distribution>> scan_distributions(const Root& root, const std::string& dir);

}  // namespace sparkdoc::pyenv
