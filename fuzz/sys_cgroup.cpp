// /proc/PID/cgroup and memory.max / memory.limit_in_bytes text. Invariant: a parsed membership
// has at least one line, and its memory path is one of them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/cgroup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto m = sparkdoc::sys::parse_cgroup(text)) {
    if (m->lines.empty()) __builtin_trap();
    for (bool unified_mount : {false, true}) {
      int version = sparkdoc::sys::cgroup_version(*m, unified_mount);
      if (version < 0 || version > 2) __builtin_trap();
      (void)sparkdoc::sys::memory_cgroup_path(*m, version);
    }
  }
  auto limit = sparkdoc::sys::parse_cgroup_memory_limit(text);
  if (limit && *limit && **limit >= (uint64_t{1} << 62)) __builtin_trap();
  return 0;
}
