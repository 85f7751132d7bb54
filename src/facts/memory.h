// The memory figures more than one command stands on: the page cache (one definition, for
// check, mem, watch and the run report alike) and the headroom by NVIDIA's unified-memory rule
// (G3, the env report's headroom_gb, mem, clean and plan).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "facts/platform.h"
#include "model/snapshot.h"
#include "model/sys.h"

namespace sparkdoc::facts {

// Page cache = Cached + Buffers - Shmem: shared memory (tmpfs, /dev/shm, GPU driver shmem)
// sits in Cached but dropping caches cannot free it. What drop_caches can free is that minus
// Dirty and Writeback.
struct PageCache {
  uint64_t bytes = 0;
  uint64_t reclaimable_bytes = 0;
};
PageCache page_cache(const sys::MemInfo& meminfo);
// The same from the fields a watch sample carries; nullopt without Cached. Without Buffers or
// Shmem (a log written before they were recorded) those count as 0.
std::optional<uint64_t> page_cache_bytes(std::optional<uint64_t> cached,
                                         std::optional<uint64_t> buffers,
                                         std::optional<uint64_t> shmem);

// Memory headroom by NVIDIA's UMA rule (hugepages free if configured, else MemAvailable +
// SwapFree) minus a safety floor; on discrete GPUs the GPU's free memory.
struct Headroom {
  int64_t bytes = 0;             // may be negative
  uint64_t available_bytes = 0;  // before the floor
  uint64_t floor_bytes = 0;
  uint64_t page_cache_bytes = 0;
  uint64_t reclaimable_cache_bytes = 0;
  std::string rule;        // how it was computed, for the report
  bool hugepages = false;  // the HugePages_Free rule was used
  // Headroom if no page cache is reclaimed: MemFree + SwapFree - floor on unified memory
  // (equal to `bytes` on the hugepage and discrete rules, where the page cache plays no part).
  int64_t without_cache_bytes = 0;
  // The GPU whose memory decided it (discrete rule only).
  std::optional<unsigned> device;
};
inline constexpr uint64_t kHeadroomFloorBytes = uint64_t{8} << 30;  // 8 GiB
std::optional<Headroom> compute_headroom(const Snapshot& snapshot, const Platform& platform);

}  // namespace sparkdoc::facts
