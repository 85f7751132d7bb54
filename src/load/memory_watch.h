// What a load costs in host memory: the process's resident set (peak included) and the
// machine's page cache, before, during and after. On a unified-memory machine (GB10) both
// come out of the pool the model's tensors need (reference §6.2), so the loader reports them.
//
// Peak RSS is the kernel's VmHWM, reset at start by writing 5 to /proc/self/clear_refs
// (Linux 4.0) so that it covers the load alone; where that write fails, the peak covers the
// whole process life and `peak_rss_exact` says so. The page cache (Cached + Buffers - Shmem,
// as `sparkdoc check` counts it) is machine-wide: other processes' reads show up in it too.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <thread>

#include "core/result.h"

namespace sparkdoc::load {

struct ResidentMemory {
  uint64_t rss_bytes = 0;       // VmRSS
  uint64_t peak_rss_bytes = 0;  // VmHWM
  bool operator==(const ResidentMemory&) const = default;
};

// Parses /proc/<pid>/status text (VmRSS and VmHWM, in kB). Errors: a line missing or malformed.
Result<ResidentMemory> parse_process_status(std::string_view text);

// Cached + Buffers - Shmem from /proc/meminfo.
Result<uint64_t> read_page_cache_bytes();

struct MemoryUse {
  uint64_t rss_before_bytes = 0;
  uint64_t peak_rss_bytes = 0;
  bool peak_rss_exact = false;
  uint64_t page_cache_before_bytes = 0;
  uint64_t page_cache_peak_bytes = 0;  // sampled every 10 ms
  uint64_t page_cache_after_bytes = 0;
  bool page_cache_known = false;

  int64_t peak_rss_growth_bytes() const {
    return static_cast<int64_t>(peak_rss_bytes) - static_cast<int64_t>(rss_before_bytes);
  }
  int64_t page_cache_growth_bytes() const {
    return static_cast<int64_t>(page_cache_after_bytes) -
           static_cast<int64_t>(page_cache_before_bytes);
  }
  int64_t page_cache_peak_growth_bytes() const {
    return static_cast<int64_t>(page_cache_peak_bytes) -
           static_cast<int64_t>(page_cache_before_bytes);
  }
};

// Watches from construction to stop(): a sampling thread reads the page cache every 10 ms.
// Threading: stop() once, from the thread that constructed it.
class MemoryWatch {
 public:
  MemoryWatch();
  ~MemoryWatch();
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  MemoryUse stop();

 private:
  MemoryUse use_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> page_cache_peak_{0};
  std::thread sampler_;
  bool stopped_ = false;
};

}  // namespace sparkdoc::load
