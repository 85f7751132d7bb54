// Control groups: which cgroup this process (and PID 1) is in and the memory limit it runs
// under. On GB10 the limit matters less than it seems: GPU allocations bypass the memory
// cgroup (gb10-nvml-dcgm §3.3), so a limit here bounds only host-side allocations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// One process's memberships as /proc/PID/cgroup lists them.
struct CgroupMembership {
  bool has_unified = false;        // a v2 line "0::<path>"
  bool has_v1 = false;             // any v1 line "N:controllers:<path>" with N > 0
  std::string unified_path;        // the path of the "0::" line
  std::string memory_path;         // the path of the v1 line whose controllers include "memory"
  std::vector<std::string> lines;  // non-empty lines as read, trimmed
  bool operator==(const CgroupMembership&) const = default;
};

// Parses /proc/PID/cgroup text. Paths may contain ':' (only the first two separate fields).
// Errors: no lines, a line with fewer than three fields, or a hierarchy id that is not a number.
Result<CgroupMembership> parse_cgroup(std::string_view text);

// 2 when /sys/fs/cgroup is a cgroup2 mount (unified_mount) or the process has only a "0::"
// line; 1 when it has v1 lines (also on hybrid hosts, where memory is a v1 controller);
// 0 when neither. A "0::/" line alone proves nothing about containment (see container.h).
int cgroup_version(const CgroupMembership& membership, bool unified_mount);

// The path that names the process's memory cgroup: the "0::" path on v2, the v1 memory
// controller's path on v1 ("" when that controller is not listed).
std::string memory_cgroup_path(const CgroupMembership& membership, int version);

// Parses memory.max (v2) or memory.limit_in_bytes (v1), in bytes. nullopt means unlimited:
// "max" on v2, and on v1 any value >= 2^62, since v1 writes "unlimited" as LONG_MAX rounded
// down to a page (9223372036854771712). Error on anything else.
Result<std::optional<uint64_t>> parse_cgroup_memory_limit(std::string_view text);

// Reads <root>/proc/self/cgroup (absent when missing), the version (cgroup.controllers at
// <root>/sys/fs/cgroup marks a v2 mount), PID 1's path from <root>/proc/1/cgroup (nullopt when
// unreadable: it needs the same user or root), and the memory limit: the smallest limit found
// on the process's cgroup and its ancestors below <root>/sys/fs/cgroup (v2: memory.max) or
// <root>/sys/fs/cgroup/memory (v1: memory.limit_in_bytes), since a parent's limit bounds its
// children. A path with ".." (a cgroup outside this namespace's root) is not walked; only the
// mount's top is read then. nullopt when every limit found is unlimited or none is readable.
Result<CgroupInfo> read_cgroup(const Root& root);

}  // namespace sparkdoc::sys
