// Rules for the packages the seeds name, over one package's audit (000 §2; 002 G1, G2, G7):
//   flash-attn     its CUDA extension must be there and run on the target (no sm_12x wheel)
//   bitsandbytes   libbitsandbytes_cuda<torch's CUDA>.so must exist (BNB_CUDA_VERSION
//                  overrides) and carry code for the target (prebuilt wheels lack Blackwell)
//   mamba-ssm      selective_scan_cuda must exist: a build without the GPU skips it silently
//   causal-conv1d  its extension must carry sm_120/sm_121 code (or PTX) for Blackwell
//   xformers, vllm their extensions must run on the target and match torch's CUDA major
//   torch          its kernels must run on the target; on 12.x, source builds of extensions
//                  get no NVFP4 unless TORCH_CUDA_ARCH_LIST names 12.1a
// and for every package: CUDA libraries the loader would not find, and needs of another CUDA
// major than torch's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "elf/compat.h"
#include "model/audit.h"

namespace sparkdoc::audit {

struct RuleContext {
  std::optional<elf::ComputeCapability> target;
  std::optional<int> torch_cuda_major;
  std::string torch_cuda;         // "13.0"
  std::string bnb_cuda_version;   // BNB_CUDA_VERSION
  std::vector<std::string> files;  // the package's shared objects, relative
};

std::vector<Note> package_notes(const PackageAudit& package, const RuleContext& context);

// Worst severity among notes: "fail", "warn", "info", or "" for none.
std::string worst_severity(const std::vector<Note>& notes);

}  // namespace sparkdoc::audit
