// Resource limits a CUDA training process needs raised: locked memory (pinned host buffers)
// and stack. The seeds run containers with --ulimit memlock=-1 --ulimit stack=67108864
// (000 §1) and --ipc=host, which gives /dev/shm the host's size instead of Docker's 64 MB.
#pragma once

#include <optional>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// The limits of /proc/PID/limits that sparkdoc records; nullopt where the text lacks the line.
struct ProcLimits {
  std::optional<Rlimit> memlock_bytes;  // "Max locked memory"
  std::optional<Rlimit> stack_bytes;    // "Max stack size"
  bool operator==(const ProcLimits&) const = default;
};

// Parses /proc/PID/limits text ("Max stack size   8388608   unlimited   bytes"). "unlimited"
// becomes nullopt in the Rlimit. Errors: a recorded limit's line with an unparseable value,
// or text with neither line.
Result<ProcLimits> parse_limits(std::string_view text);

// Live root: getrlimit(RLIMIT_MEMLOCK / RLIMIT_STACK) of this process (RLIM_INFINITY becomes
// nullopt). Fixture root: parsed from <root>/proc/self/limits, each limit absent when the file
// or its line is missing. shm_size_bytes: statvfs of <root>/dev/shm, f_blocks * f_frsize,
// absent when /dev/shm is missing.
Limits read_limits(const Root& root);

}  // namespace sparkdoc::sys
