// /proc/meminfo: how much memory the kernel reports, the basis of the UMA headroom figure on
// GB10 (CUDA's own free-memory figure leaves out reclaimable memory and swap).
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses /proc/meminfo text. Fields in kB are converted to bytes; HugePages_Total/Free/Rsvd
// stay page counts; Hugepagesize becomes bytes. Fields the text lacks stay 0 (older kernels
// lack some) but CmaTotal and CmaFree, which stay none; unknown lines are ignored. Errors: no
// MemTotal line, a known field whose value is not a number or whose unit is not "kB", or a
// value that overflows in bytes.
Result<MemInfo> parse_meminfo(std::string_view text);

// Reads <root>/proc/meminfo. Absent when the file is missing.
Result<MemInfo> read_meminfo(const Root& root);

}  // namespace sparkdoc::sys
