// Memory held by no live process: the orphaned allocations a killed run leaves behind (000 §6:
// each SIGKILLed container took ~6 GB more until a new CUDA context started). `sparkdoc mem`
// shows the estimate with its arithmetic, `sparkdoc clean` acts on it and check's S10 reports
// it: one definition here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::facts {

// An idle DGX Spark keeps some GB outside what /proc/meminfo itemises and NVML lists: the
// reference's idle figures (§3.2: MemTotal 127.6 GB, MemAvailable 118.6 GB, so 9 GB in use with
// a desktop's few GB of processes and cache) leave about 4-6 GB for the driver and firmware.
// That is an inference to confirm on a device. Each SIGKILLed run leaves about 6 GB more
// (000 §6: ~122 GB available clean, ~116 GB after one killed run), so above this allowance the
// remainder points at orphaned allocations.
inline constexpr uint64_t kUnifiedUnaccountedAllowanceBytes = uint64_t{8} << 30;  // 8 GiB
// On a discrete GPU NVML's used figure (v2 leaves the driver's reservation out) and the
// per-process sum differ by little more than context bookkeeping.
inline constexpr uint64_t kDiscreteUnaccountedAllowanceBytes = uint64_t{1} << 30;  // 1 GiB

// The estimate of memory held by no live process (orphaned allocations of killed runs).
//
// Unified memory: the driver takes CUDA allocations straight from system memory, so they
// lower MemFree but appear in no process's RSS and in no /proc/meminfo field (reference §3.3).
//   in use     = MemTotal - MemFree
//   itemised   = AnonPages + Buffers + Cached (shmem included) + SwapCached + Slab
//                + KernelStack + PageTables + free hugepages (the pool is never in MemFree)
//   unaccounted = in use - itemised - sum of NVML's per-process figures
// Hugepages in use stay in the remainder: when hugepages are configured CUDA allocates from the
// pool (NVIDIA's rule counts only HugePages_Free as available).
// Discrete GPUs, per device: NVML used - sum of that device's per-process figures.
struct OrphanEstimate {
  bool unified = false;
  int64_t unaccounted_bytes = 0;  // the remainder, clamped at 0
  uint64_t allowance_bytes = 0;   // what is normal (the constants above)
  bool likely = false;            // unaccounted_bytes > allowance_bytes
  // Inputs, shown with the figure (unified).
  uint64_t in_use_bytes = 0;
  uint64_t itemised_bytes = 0;
  uint64_t hugepages_free_bytes = 0;
  uint64_t processes_bytes = 0;  // NVML per-process sum (all devices on unified)
  bool processes_known = true;   // false: NVML's list missing; the remainder then holds
                                 // live GPU processes too
  // Discrete: per device "GPU 0: used 20.6 GB - processes 20.6 GB = 0.0 GB".
  std::vector<std::string> device_lines;
  std::string formula;               // the arithmetic with numbers, one line
  std::vector<std::string> caveats;  // what limits the estimate
  std::vector<std::string> advice;   // what to do about it (000 §6), when likely
  bool operator==(const OrphanEstimate&) const = default;
};

// NVML's per-process figures summed over every device, and whether any device's list was read
// (absent with why when none was).
struct GpuProcessTotal {
  uint64_t bytes = 0;
  Reading<bool> listed;
};
GpuProcessTotal gpu_process_total(const Snapshot& snapshot);

// The estimate, or why it cannot be made (no /proc/meminfo on unified memory, NVML unread).
Reading<OrphanEstimate> estimate_orphans(const Snapshot& snapshot, const Platform& platform);

}  // namespace sparkdoc::facts
