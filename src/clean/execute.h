// The plan carried out, for clean/clean.h's clean() with --yes: execute.cpp runs the steps in
// order and keeps the journal; execute_services.cpp stops the desktop service; execute_gpu.cpp
// holds the steps on the GPU. Internal to clean.
#pragma once

#include <optional>
#include <string>

#include "clean/clean.h"
#include "clean/plan.h"
#include "mem/account.h"
#include "model/snapshot.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"

namespace sparkdoc::clean {

// Carries out every step of `report` in state kWould, writing each outcome into it.
void carry_out_plan(const Options& options, Observer* observer, const Snapshot& snapshot,
                    const mem::MemReport& mem, CleanReport& report);

// Stops each of mem.stoppable with systemctl. Returns how to start it again, when one was
// stopped.
std::optional<std::string> run_stop_known(Step& step, const Options& options,
                                          const mem::MemReport& mem, Observer* observer);

// A fresh CUDA context on GPU 0 (000 §6 step 4).
void run_fresh_context(Step& step, const Options& options, Observer* observer);

// Each GPU of step.clock_locks journaled, then locked. Returns whether a lock stays (a change
// the journal keeps for `clean --restore`).
bool run_clock_cap(Step& step, tune::JournalWriter& journal, tune::GpuClockControl& clocks,
                   Observer* observer);

}  // namespace sparkdoc::clean
