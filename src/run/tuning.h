// What `sparkdoc run` changes on the machine for the command and puts back when it ends: the
// vm values of the load window (--tune-vm) and the GPU clock cap (--cap-clocks), each
// journaled (tune/journal.h) before it changes, so that a SIGKILL of sparkdoc leaves a journal
// the next start or `sparkdoc clean --restore` restores.
//
// A journal `sparkdoc clean --yes` left (its values are meant for this run) is appended to and
// kept: at the end this run puts back what it found (clean's values, clean's cap), and
// `sparkdoc clean --restore` undoes the rest after training. A GPU clean already capped to the
// same range is not touched.
// Threading: one thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/runlog.h"
#include "run/runner.h"
#include "tune/clock_cap.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"

namespace sparkdoc::run {

class Tuning {
 public:
  // `clocks`: the GPUs' clocks; nullptr: tune::gpu_clock_control(options.root).
  explicit Tuning(const RunOptions& options, tune::GpuClockControl* clocks = nullptr);
  ~Tuning();  // restore(), for the error paths
  Tuning(const Tuning&) = delete;
  Tuning& operator=(const Tuning&) = delete;

  // 000 §6: min_free_kbytes=1048576 and vfs_cache_pressure=500 for the load window.
  Result<std::vector<runlog::TunedValue>> set_vm_for_load();
  // Each GPU NVML lists locked to `cap` (path: the GPU's UUID; old: "driver default" or the
  // cap clean set; new: the cap). Errors: no GPU can be capped (why), the journal, a lock.
  Result<std::vector<runlog::TunedValue>> cap_clocks(tune::ClockCap cap);
  // Journals the command started with the values in place, so that a start after a SIGKILL
  // of this sparkdoc leaves them while the command still runs. Nothing to do without tuning.
  Result<void> note_command(pid_t pid, std::string_view name);
  // Everything this run changed, put back; once.
  std::vector<runlog::RestoredItem> restore();

 private:
  struct CappedGpu {
    std::string uuid;
    std::optional<tune::ClockCap> before;  // clean's cap, when its journal had one
  };

  Result<void> open_journal();
  tune::GpuClockControl& clocks();
  std::vector<runlog::RestoredItem> put_back_what_was_found();

  const RunOptions& o_;
  tune::GpuClockControl* clocks_;
  std::unique_ptr<tune::GpuClockControl> owned_clocks_;
  std::optional<tune::JournalWriter> journal_;
  std::optional<tune::JournalContents> found_;  // the journal as it was before this run
  std::vector<runlog::TunedValue> tuned_;
  std::vector<CappedGpu> capped_;
};

}  // namespace sparkdoc::run
