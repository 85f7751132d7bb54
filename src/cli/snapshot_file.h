// Reading a snapshot that `sparkdoc snapshot -o FILE` recorded, for the commands that judge a
// recorded machine (mem, clean's dry run, snapshot --diff).
#pragma once

#include <string>

#include "core/result.h"
#include "model/snapshot.h"

namespace sparkdoc::cli {

// The snapshot in `path` (up to 256 MiB); errors name the file.
Result<Snapshot> load_snapshot_file(const std::string& path);
// The file's name without its folder, as reports name their source.
std::string file_label(const std::string& path);

}  // namespace sparkdoc::cli
