// Locking a GPU's clocks to a range and resetting them, through NVML: what `nvidia-smi -lgc
// MIN,MAX` and `nvidia-smi -rgc` do (nvmlDeviceSetGpuLockedClocks, nvmlDeviceResetGpuLockedClocks,
// Volta and newer, root only). The lock lasts until a reset, a driver reload or a reboot.
//
// A GPU is named by its UUID, never by its index: a restore after a reboot, or after another
// GPU came or went, must touch the GPU that was locked. Each call initialises NVML, finds the
// device and shuts NVML down again.
//
// NVML has no public call that reads a lock back (nvmlDeviceGetGpuLockedClocks is not
// exported), so whether a GPU was already locked cannot be told here.
//
// Failures say what to do: NO_PERMISSION (not root), NOT_SUPPORTED (the GPU or driver does not
// lock clocks), INVALID_ARGUMENT (a range the driver refuses), an NVML without the two entry
// points, a UUID NVML does not list.
// Threading: as NVML; one call at a time is enough for clean and run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/reading.h"
#include "core/result.h"
#include "gpu/nvml_api.h"

namespace sparkdoc::gpu {

// A GPU whose clocks can be locked, as NVML lists it.
struct LockableGpu {
  unsigned index = 0;  // NVML's index now; for messages only
  std::string uuid;
  std::string name;
  // The highest SM clock (nvmlDeviceGetMaxClockInfo): a cap above it changes nothing.
  Reading<unsigned> max_sm_clock_mhz;
  bool operator==(const LockableGpu&) const = default;
};

// Every GPU NVML lists that has a UUID. Errors: NVML cannot be initialised, or it lacks
// nvmlDeviceSetGpuLockedClocks or nvmlDeviceResetGpuLockedClocks (then no lock is attempted).
Result<std::vector<LockableGpu>> list_lockable_gpus(const Nvml& nvml);

// nvmlDeviceSetGpuLockedClocks(device with `uuid`, min_mhz, max_mhz).
Result<void> lock_gpu_clocks(const Nvml& nvml, std::string_view uuid, unsigned min_mhz,
                             unsigned max_mhz);

// nvmlDeviceResetGpuLockedClocks(device with `uuid`). Errors with Why::kAbsent when no GPU
// has that UUID now.
Result<void> reset_gpu_clocks(const Nvml& nvml, std::string_view uuid);

// The error NVML's `code` from `function` means for a clock lock or reset, with what to do.
// Pure apart from nvmlErrorString's text.
Error clock_error(const Nvml& nvml, nvml::nvmlReturn_t code, std::string_view function);

}  // namespace sparkdoc::gpu
