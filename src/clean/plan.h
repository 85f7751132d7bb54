// `sparkdoc clean`: the pre-run cleanup of 000 §6 as a list of steps. This file plans the steps
// from a Snapshot and mem's accounting of it; it is pure. clean/execute carries them out
// (clean/clean.h) and writes each outcome back into its Step; clean/render shows either.
//
// The steps, in the seed's order:
//   holders          list GPU holders that are not training (desktop, servers)      report
//   stop_known       stop gnome-remote-desktop (--stop-known only)                  change
//   stale_holders    holders of /dev/nvidia* NVML does not list; orphan estimate    report
//   drop_caches      sync, then drop_caches = 3                                      action
//   vm_tuning        min_free_kbytes 1048576, vfs_cache_pressure 500 (--tune-vm)    journaled
//   clock_cap        GPU clocks locked to 300-2200 MHz (--cap-clocks; field 2026)   journaled
//   swap_reset       swapoff + swapon of every active area, when it fits in RAM     journaled
//   cuda_context     a fresh CUDA context, so the driver reclaims orphaned memory   action
//   measure          /proc/meminfo again: page cache and available before -> after  report
//   drop_caches_again  the seed's second drop (the context's own cache)             action
//   verdict          headroom against --need (70 GB on GB10 by default, 000 §6)     report
// Step keys and state keys are public (JSON): append only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/reading.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "mem/account.h"
#include "model/snapshot.h"
#include "model/sys.h"
#include "tune/clock_cap.h"

namespace sparkdoc::clean {

enum class StepId {
  kHolders,
  kStopKnown,
  kStaleHolders,
  kDropCaches,
  kVmTuning,
  kSwapReset,
  kCudaContext,
  kMeasure,
  kDropCachesAgain,
  kVerdict,
  kClockCap,
};
std::string_view step_key(StepId id);  // "holders", "stop_known", ...

enum class StepState {
  kWould,    // dry run: what it would do
  kInfo,     // a report, nothing to change
  kSkipped,  // not done, with the reason
  kDone,
  kFailed,
};
std::string_view state_key(StepState state);  // "would", "info", "skipped", "done", "failed"

// One value a step changes: "/proc/sys/vm/min_free_kbytes 45166 -> 1048576".
struct ValueEdit {
  std::string path;
  std::optional<int64_t> old_value;  // nullopt when it could not be read
  int64_t new_value = 0;
  bool journaled = false;  // recorded in the journal before the change
  bool operator==(const ValueEdit&) const = default;
};

// One GPU's clocks a step locks: "GPU-3c1f... (NVIDIA GB10) 300-2200 MHz".
struct ClockLock {
  tune::ClockGpu gpu;
  tune::ClockCap cap;
  bool journaled = false;  // recorded in the journal, then locked
  bool operator==(const ClockLock&) const = default;
};

struct Step {
  StepId id = StepId::kHolders;
  std::string title;
  StepState state = StepState::kInfo;
  std::string detail;              // one line (wrapped when printed)
  std::vector<std::string> lines;  // further facts, one per process or area
  std::vector<ValueEdit> edits;
  std::vector<ClockLock> clock_locks;  // clock_cap: the GPUs it locks
  std::vector<std::string> command;  // a program run by the step (stop_known), argv
  double duration_ms = 0;            // when carried out
  bool operator==(const Step&) const = default;
};

// What the memory looked like, for "before -> after".
struct MemoryFigures {
  uint64_t page_cache_bytes = 0;
  uint64_t mem_available_bytes = 0;
  uint64_t mem_free_bytes = 0;
  std::optional<int64_t> headroom_bytes;  // facts::compute_headroom
  bool operator==(const MemoryFigures&) const = default;
};
MemoryFigures figures_of(const Snapshot& snapshot, const facts::Platform& platform);

// The seed's gate before a load: "Check that free HBM > 70 GB before loading" (000 §6 step 4).
inline constexpr uint64_t kSeedNeedBytes = 70ull * 1000 * 1000 * 1000;

// The memory a run needs, and who said so.
struct MemoryNeed {
  uint64_t bytes = 0;
  std::string source;  // "--need", "the GB10 default (000 §6: free > 70 GB before loading)"
  bool operator==(const MemoryNeed&) const = default;
};
// --need when given; else 70 GB on a DGX Spark; else none (no verdict on other machines).
std::optional<MemoryNeed> choose_need(const facts::Platform& platform,
                                      std::optional<uint64_t> need_bytes);

struct CleanVerdict {
  MemoryNeed need;
  std::optional<int64_t> headroom_bytes;  // nullopt: could not be computed
  std::string rule;                       // how the headroom was computed
  bool pass = false;
  bool operator==(const CleanVerdict&) const = default;
};
// Headroom (the one rule, facts::compute_headroom) against the need.
CleanVerdict judge(const std::optional<facts::Headroom>& headroom, const MemoryNeed& need);

struct CleanRequest {
  bool execute = false;                // --yes
  bool stop_known = false;             // --stop-known
  bool tune_vm = false;                // --tune-vm
  std::optional<uint64_t> need_bytes;  // --need
  // /proc/swaps, when read (live runs); a recorded snapshot has only SwapTotal and SwapFree.
  std::optional<std::vector<sys::SwapArea>> swap_areas;
  // The journal an earlier run left unrestored, when there is one (a run appends to it).
  std::optional<std::string> earlier_journal;
  // --cap-clocks, and the GPUs NVML can lock (tune/gpu_clocks.h) or why none; a recorded
  // snapshot's from its NVML devices (clock_gpus_of).
  std::optional<tune::ClockCap> cap_clocks;
  Reading<std::vector<tune::ClockGpu>> clock_gpus;
};

// The GPUs of a recorded snapshot as clock_cap plans for them: each NVML device with a UUID.
Reading<std::vector<tune::ClockGpu>> clock_gpus_of(const Snapshot& snapshot);

struct CleanReport {
  std::string source;
  std::string taken_at;
  std::string hostname;
  facts::Platform platform;
  bool dry_run = true;
  std::vector<Step> steps;
  MemoryFigures before;
  std::optional<MemoryFigures> after;  // set by the measure step
  std::optional<CleanVerdict> verdict;
  std::optional<std::string> journal;  // the journal a run wrote, when one stays
  std::vector<std::string> notes;

  Step& step(StepId id);  // precondition: the plan holds every step
  const Step* find(StepId id) const;
  bool any_failed() const;
};

// The plan: every step, in order, with what it would do on this snapshot (state kWould, kInfo
// or kSkipped with its reason), and the verdict on the memory as it is now. For a run
// (execute) the same plan is what clean/execute carries out, turning kWould into kDone,
// kFailed or kSkipped, and judging the verdict again after the cleanup.
CleanReport plan_clean(const Snapshot& snapshot, const mem::MemReport& mem,
                       const CleanRequest& request);

}  // namespace sparkdoc::clean
