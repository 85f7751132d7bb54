// /proc/PID/stat: a process's state and start time, to tell a live process from a zombie and
// from a later process that reuses its pid (a killed `sparkdoc run`'s command, journaled).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::sys {

struct ProcStat {
  char state = '?';          // R, S, D, Z, T, ...
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot when the process started
  bool operator==(const ProcStat&) const = default;
};

// "PID (comm) S ppid ...": comm may hold spaces and ')' (a process names itself), so the
// fields are counted after the last ')'. Errors: no "(...)", too few fields, or a start time
// that is not a number.
Result<ProcStat> parse_proc_stat(std::string_view text);

// Reads <root>/proc/PID/stat. Absent when there is no such process.
Result<ProcStat> read_proc_stat(const Root& root, int64_t pid);

}  // namespace sparkdoc::sys
