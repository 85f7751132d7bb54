// `sparkdoc clean` as one call: the plan of clean/plan.h for a snapshot (a recorded one, or
// this machine captured now), carried out step by step when asked, and `--restore` of the
// journal a run left.
//
// A run changes the machine: kernel values, swap, the desktop service and the GPU clock cap
// through tune (journaled first where a value stays changed), the fresh CUDA context through
// gpu. On a fixture root (tests) the steps that would act on this machine anyway (systemctl,
// swapoff, the CUDA context, the clock cap with the system's NVML) are skipped with that reason;
// the /proc writes go under the root, and the clock cap goes to the NVML SPARKDOC_NVML_LIBRARY
// names (tests: the fake).
// Threading: one call at a time per process (the journal holds a lock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "clean/plan.h"
#include "core/fs.h"
#include "core/result.h"
#include "model/snapshot.h"
#include "tune/clock_cap.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"

namespace sparkdoc::clean {

// The machine the steps act on and whose journal they keep.
struct Machine {
  Root root;                   // "/" or a fixture tree
  unsigned euid = 0;           // root's journal, or a user's under their state folder
  std::string xdg_state_home;  // $XDG_STATE_HOME and $HOME: where a user's journal lives
  std::string home;
  std::string path;  // $PATH, where systemctl is looked for
};
// This process on `root`: its effective uid and its environment (a standard PATH when unset).
Machine this_machine(Root root);

struct Options {
  Machine machine;
  bool execute = false;                // --yes: carry the steps out (the caller checked for root)
  bool stop_known = false;             // --stop-known
  bool tune_vm = false;                // --tune-vm
  bool no_gpu = false;                 // --no-gpu: neither NVML nor the CUDA driver
  std::optional<tune::ClockCap> cap_clocks;  // --cap-clocks
  // The GPUs' clocks; nullptr: tune::gpu_clock_control(machine.root, no_gpu).
  tune::GpuClockControl* clocks = nullptr;
  std::optional<uint64_t> need_bytes;  // --need
  std::string need_text;               // --need as given, for the journal's command line
};

// What a run says while it goes; text mode prints it, JSON mode passes no observer.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void started(const CleanReport& report) = 0;  // the plan, before the first step
  virtual void working(std::string_view what) = 0;      // a step that can take seconds begins
  virtual void finished(const Step& step, size_t number) = 0;  // number: 1-based
};

// A snapshot recorded earlier, planned for in a dry run, with the name the report gives it.
struct Recorded {
  Snapshot snapshot;
  std::string label;
};

// The plan for `recorded`, or for options.machine captured now (memory and GPU holders; its
// /proc/swaps and any unrestored journal too); with options.execute the plan carried out,
// each step's outcome written back into it. Never fails: a step that cannot be done says why.
// Precondition: not execute with a recorded snapshot.
CleanReport clean(const Options& options, const std::optional<Recorded>& recorded,
                  Observer* observer);

// Where the machine's journal is (root's or the user's). Errors: no place for one.
Result<tune::JournalLocation> journal_location(const Machine& machine);
// `clean --restore`: every journaled value written back, the swap areas turned on again and
// the GPU clocks reset, the journal removed once all is restored (tune::restore_journal).
// Errors: the journal cannot be opened, locked or read.
Result<tune::RestoreReport> restore(const Machine& machine, const tune::JournalLocation& location);

}  // namespace sparkdoc::clean
