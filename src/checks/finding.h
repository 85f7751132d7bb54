// What a check returns, and the platform every check judges against.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.h"

namespace sparkdoc::checks {

// Verdict words are public: they lead every output line and fill the env report.
enum class Verdict { kPass, kFail, kWarn, kSkip, kInfo };

std::string_view verdict_word(Verdict v);   // "PASS", "FAIL", ...
std::string_view verdict_key(Verdict v);    // "pass", "fail", ... (env report)

struct Finding {
  std::string id;                    // "G3", "S1"
  Verdict verdict = Verdict::kSkip;
  std::string detail;                // the human line after the colon
  std::vector<std::string> details;  // further facts (one per process, per file...), JSON only
  bool operator==(const Finding&) const = default;
};

// What kind of machine the snapshot describes; decided from several readings, never the name
// alone (a GB10 has been seen to call itself "NVIDIA JMJWOA-Generic-GPU").
enum class PlatformKind {
  kDgxSpark,   // GB10: compute capability 12.1 with unified memory
  kUnified,    // another GPU that shares system memory (integrated)
  kDiscrete,   // a GPU with its own memory
  kNoGpu,      // no NVIDIA GPU could be read
};

struct Platform {
  PlatformKind kind = PlatformKind::kNoGpu;
  std::string key;          // env report "platform": "dgx-spark", "nvidia-uma", "nvidia-discrete", "no-gpu"
  std::string description;  // "DGX Spark (GB10, compute capability 12.1, unified memory)"
  std::vector<std::string> evidence;  // which readings decided it
  std::optional<gpu::ComputeCapability> compute_capability;
  std::string gpu_name;
  bool unified_memory() const {
    return kind == PlatformKind::kDgxSpark || kind == PlatformKind::kUnified;
  }
};

}  // namespace sparkdoc::checks
