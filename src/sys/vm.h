// /proc/sys/vm tunables that the seeds change before a model load (000 §6: min_free_kbytes
// 1048576 and vfs_cache_pressure 500 during the load; 45166 and 100 are the defaults restored).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses a one-integer sysctl file ("1048576\n"). Error on anything else.
Result<int64_t> parse_sysctl_int(std::string_view text);

// Reads <root>/proc/sys/vm/{min_free_kbytes,vfs_cache_pressure,swappiness}, each on its own:
// a missing file makes that reading absent, the others are still taken. min_free_kbytes is
// in kB, as the kernel names it; the others are unitless kernel weights.
VmTunables read_vm_tunables(const Root& root);

}  // namespace sparkdoc::sys
