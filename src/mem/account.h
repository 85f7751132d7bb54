// Memory accounting for `sparkdoc mem`: where the memory of a machine is, from a Snapshot alone.
// Pure: it links the snapshot model and the checks (for the platform and the one headroom
// rule, facts::compute_headroom), never a probe.
//
// On a DGX Spark the GPU's memory is the system's memory (reference §3): page cache, the CUDA
// allocations of killed containers (invisible to `nvidia-smi --query-compute-apps`, 000 §6) and
// a remote-desktop service's ~6 GB context all come out of one pool, and NVML answers
// NOT_SUPPORTED for the device's memory. This file says what each part holds and how much of
// it no live process accounts for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "facts/memory.h"
#include "facts/orphans.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::mem {

// Host memory from /proc/meminfo, in bytes.
struct HostMemory {
  uint64_t total_bytes = 0;              // MemTotal
  uint64_t free_bytes = 0;               // MemFree: what cudaMemGetInfo reports on GB10
  uint64_t available_bytes = 0;          // MemAvailable
  uint64_t page_cache_bytes = 0;         // Cached + Buffers - Shmem (facts::Headroom)
  uint64_t reclaimable_cache_bytes = 0;  // page cache less Dirty and Writeback
  uint64_t shmem_bytes = 0;
  uint64_t dirty_bytes = 0;  // Dirty + Writeback
  uint64_t anon_bytes = 0;   // AnonPages
  uint64_t slab_bytes = 0;
  uint64_t slab_reclaimable_bytes = 0;
  uint64_t kernel_stack_bytes = 0;
  uint64_t page_tables_bytes = 0;
  // Slab, KernelStack and PageTables were read (snapshots before they were recorded have 0;
  // a running kernel always has some slab).
  bool kernel_recorded = false;
  uint64_t hugepages_total = 0;  // pages
  uint64_t hugepages_free = 0;   // pages
  uint64_t hugepage_size_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  uint64_t swap_cached_bytes = 0;
  bool operator==(const HostMemory&) const = default;
};

// One GPU as NVML sees it.
struct GpuMemory {
  unsigned index = 0;
  std::string name;
  Reading<gpu::MemoryInfo> memory;  // not_supported on GB10
  bool operator==(const GpuMemory&) const = default;
};

// What a GPU-memory holder is, for the cleanup's "not training" list (000 §6 step 1).
enum class Role {
  kServer,   // a known GPU server (vllm, ollama, ...) from the process scan (G6)
  kDesktop,  // the desktop: X, a compositor, gnome-remote-desktop
  kOther,    // anything else: a training job, a notebook, a stale process
};
std::string_view role_key(Role role);  // "server", "desktop", "other"

// A process NVML lists on a device, joined with the process scan by PID.
struct ProcessMemory {
  uint32_t pid = 0;
  unsigned device = 0;
  std::string type;                    // "compute" or "graphics"
  std::optional<uint64_t> used_bytes;  // nullopt: NVML could not say (the reason is in note)
  bool in_scan = false;                // the process scan saw this PID
  std::string comm;                    // from the scan's GPU holders, when listed there
  std::string cmdline;                 // from the scan (holders, then servers)
  std::string server_kind;             // "gnome-remote-desktop", "vllm", ...
  Role role = Role::kOther;
  std::string note;  // why used_bytes is missing, when it is
  bool operator==(const ProcessMemory&) const = default;
};

// A process holding /dev/nvidia* that no device's NVML list names.
struct UnlistedHolder {
  int pid = 0;
  std::string comm;
  std::string cmdline;
  std::vector<std::string> devices;
  // /dev/nvidia-uvm open: a CUDA context (the driver opens UVM for one); without it, an NVML
  // or driver user such as a monitor or nvidia-persistenced.
  bool cuda = false;
  Role role = Role::kOther;
  std::string server_kind;
  bool operator==(const UnlistedHolder&) const = default;
};

using facts::kDiscreteUnaccountedAllowanceBytes;
using facts::kUnifiedUnaccountedAllowanceBytes;
using facts::OrphanEstimate;

struct MemReport {
  std::string sparkdoc_version;
  std::string taken_at;
  std::string hostname;
  std::string source;  // "live" or the snapshot file name
  facts::Platform platform;
  bool unified = false;

  Reading<HostMemory> host;                  // absent with the meminfo reading's reason
  std::optional<facts::Headroom> headroom;   // facts::compute_headroom, the G3 figure
  Reading<sys::Psi> pressure;

  Reading<std::vector<GpuMemory>> gpus;  // absent with NVML's reason
  std::vector<ProcessMemory> processes;  // every device, by device then PID
  uint64_t processes_bytes = 0;
  Reading<bool> processes_listed;  // NVML answered the process lists (or why not)
  Reading<std::vector<UnlistedHolder>> unlisted_holders;  // absent with the scan's reason
  Reading<OrphanEstimate> orphans;  // absent when an input is missing, with why
  std::vector<std::string> notes;   // container PID caveat and the like
  // Known desktop services holding GPU memory that `clean --stop-known` can stop (000 §6
  // step 1), with their PIDs.
  std::vector<sys::KnownServer> stoppable;
};

// A missing reading's reason as people read it: the detail alone for a thing that is simply
// absent ("not read: --no-gpu"), else "not supported: NVML_ERROR_NOT_SUPPORTED (3)" style.
template <class T>
std::string why_not(const Reading<T>& reading) {
  return reading.why_not();
}

// Accounts the snapshot; `source` names where it came from. Never fails: missing readings
// become missing parts with their reasons.
MemReport account(const Snapshot& snapshot, const facts::Platform& platform,
                  std::string source = "live");

}  // namespace sparkdoc::mem
