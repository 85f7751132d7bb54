// GPU code read by this component's readers, judged as the checks judge it: elf records the
// facts (elf/targets.h), checks/native_code.h judges them for a device. For the tests that pin
// verdicts on real and built fatbins.
#pragma once

#include <string_view>

#include "checks/native_code.h"
#include "elf/fatbin.h"
#include "elf/targets.h"
#include "model/native.h"

namespace sparkdoc::elf {

using ComputeCapability = gpu::ComputeCapability;
using RunVerdict = checks::CodeRuns;
using audit::ArchVariant;
using audit::GpuTarget;
using audit::parse_compute_capability;
using audit::ptx_name;
using audit::sass_name;
using checks::allows_block_scaled_fp4;
using checks::GpuCodeVerdict;
using checks::ptx_jit_runs_on;
using checks::sass_runs_on;

// The devices the tests judge for.
inline constexpr ComputeCapability kGb10{12, 1};
inline constexpr ComputeCapability kRtx5090{12, 0};
inline constexpr ComputeCapability kH100{9, 0};

inline GpuCodeVerdict judge(const GpuCode& code, ComputeCapability device) {
  return checks::judge_gpu_code(gpu_code_facts(code), device);
}

inline std::string_view verdict_name(RunVerdict runs) {
  return checks::code_runs_name(runs);
}

}  // namespace sparkdoc::elf
