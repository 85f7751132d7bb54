// /dev/shm: its size and use (statvfs), its files with their owners, and which users own a
// live process, so that IPC files whose owner has no process left (sem.*, torch_* of a killed
// run) can be told from those in use. On GB10 this tmpfs is carved from the one memory pool.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

inline constexpr size_t kShmFilesKept = 256;

// The users owning the numbered folders of a /proc listing (name -> owner uid), sorted and
// without repeats; names that are not process IDs are skipped.
std::vector<uint32_t> live_uids_from(const std::vector<std::pair<std::string, uint32_t>>& proc);

// Reads <root>/dev/shm and <root>/proc. Absent when /dev/shm is missing.
Result<ShmScan> read_shm(const Root& root);

}  // namespace sparkdoc::sys
