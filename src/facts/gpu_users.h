// The processes that use a GPU, as NVML lists them, with the names the process scan gives
// their PIDs (G3, G6 and S7 judge them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace sparkdoc::facts {

// A name for a PID: the comm of the process holding /dev/nvidia*, else a known server's kind.
std::optional<std::string> process_name(const Snapshot& snapshot, uint32_t pid);

struct GpuUser {
  uint32_t pid = 0;
  unsigned device = 0;
  std::string name;                    // "" when unknown
  std::optional<uint64_t> used_bytes;  // none when NVML could not say
};
// Every process NVML lists, on every device, with names; empty when NVML was not read.
std::vector<GpuUser> gpu_users(const Snapshot& snapshot);
// "pid 4242 (vllm) 98.1 GB".
std::string describe_gpu_user(const GpuUser& user);

}  // namespace sparkdoc::facts
