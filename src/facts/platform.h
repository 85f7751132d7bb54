// What kind of machine a snapshot describes, decided from several readings, never the name
// alone (a GB10 has been seen to call itself "NVIDIA JMJWOA-Generic-GPU"). Every check, mem,
// watch, the reports and the cli judge against this one classification.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"
#include "model/gpu.h"
#include "model/snapshot.h"
#include "model/sys.h"

namespace sparkdoc::facts {

enum class PlatformKind {
  kDgxSpark,  // GB10: compute capability 12.1 with unified memory
  kUnified,   // another GPU that shares system memory (integrated)
  kDiscrete,  // a GPU with its own memory
  kNoGpu,     // no NVIDIA GPU could be read
};

struct Platform {
  PlatformKind kind = PlatformKind::kNoGpu;
  std::string key;  // env report "platform": "dgx-spark", "nvidia-uma", "nvidia-discrete", "no-gpu"
  std::string description;            // "DGX Spark (GB10, compute capability 12.1, unified memory)"
  std::vector<std::string> evidence;  // which readings decided it
  std::optional<gpu::ComputeCapability> compute_capability;
  std::string gpu_name;
  bool unified_memory() const {
    return kind == PlatformKind::kDgxSpark || kind == PlatformKind::kUnified;
  }
};

// From the GPU readings, the host's memory (NVML's total against MemTotal) and the host.
Platform classify_platform(const gpu::GpuReadings& gpu, const Reading<sys::MemInfo>& meminfo,
                           const sys::Host& host);
Platform classify_platform(const Snapshot& snapshot);

}  // namespace sparkdoc::facts
