// The GPU clock cap of `sparkdoc clean --cap-clocks` and `sparkdoc run --cap-clocks`
// (tune/clock_cap.h says why and by how much), set like the vm values: journaled (written and
// fsync'ed) before the change, so that `sparkdoc clean --restore` resets the clocks even after
// sparkdoc was killed, and on the GPU with the journaled UUID whatever NVML's order is then.
//
// The clocks are changed through NVML (gpu/clocks.h), never through nvidia-smi. A lock NVML
// cannot read back: a restore resets to the driver's default, so a cap of the user's own (a
// unit running `nvidia-smi -lgc`) is reset too; the messages say so.
// Threading: a GpuClockControl is used from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "tune/clock_cap.h"
#include "tune/journal.h"

namespace sparkdoc::tune {

// The GPUs and the two calls that change their clocks; tests substitute a fake.
class GpuClockControl {
 public:
  virtual ~GpuClockControl() = default;
  // The GPUs whose clocks can be locked, or why none can (no NVML, an NVML without the lock,
  // a fixture root with the system's NVML).
  virtual Result<std::vector<ClockGpu>> gpus() = 0;
  virtual Result<void> lock(const std::string& uuid, ClockCap cap) = 0;
  virtual Result<void> reset(const std::string& uuid) = 0;
};

// The process's NVML (SPARKDOC_NVML_LIBRARY, else libnvidia-ml.so.1), loaded on first use.
class NvmlGpuClocks final : public GpuClockControl {
 public:
  Result<std::vector<ClockGpu>> gpus() override;
  Result<void> lock(const std::string& uuid, ClockCap cap) override;
  Result<void> reset(const std::string& uuid) override;
};

// One that refuses every call with `why`.
class RefusedGpuClocks final : public GpuClockControl {
 public:
  explicit RefusedGpuClocks(std::string why) : why_(std::move(why)) {}
  Result<std::vector<ClockGpu>> gpus() override;
  Result<void> lock(const std::string& uuid, ClockCap cap) override;
  Result<void> reset(const std::string& uuid) override;

 private:
  std::string why_;
};

// The control for `root`: NVML on the live machine; on a fixture root NVML only when
// SPARKDOC_NVML_LIBRARY names the library (tests name the in-tree fake), since the system's
// NVML would change this machine's GPU; else a refusal that says so. `no_gpu` (--no-gpu)
// refuses too.
std::unique_ptr<GpuClockControl> gpu_clock_control(const Root& root, bool no_gpu = false);

// Journals the lock of `gpu` to `cap`, then locks. Errors: the journal line could not be
// written (nothing changed), or the lock failed (the line stays; a reset of an unlocked GPU
// changes nothing).
Result<void> cap_gpu_clocks(JournalWriter& journal, GpuClockControl& clocks, const ClockGpu& gpu,
                            ClockCap cap);

}  // namespace sparkdoc::tune
