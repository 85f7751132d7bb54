// G7 NVFP4 slower than FP8 on SM121 (002 G7; reference §5.1 G7).
//
// Rule, from the platform's compute capability:
//   WARN  12.1 with flashinfer-cubin installed: its 12,681 cubins (0.6.11) are all
//         Sm100a/Sm100f/Sm103a, and FlashInfer's loader falls through to a wrong-arch one
//         (degenerate NVFP4 MoE output, flashinfer-ai/flashinfer#3294); GB10 does not need it
//         (flashinfer#4781; field 2026 §5).
//   PASS  12.1 (GB10): the rule applies. SM121 converts to FP4 (cvt ... e2m1x2) only in code
//         built for the arch-specific sm_121a or the family targets sm_120f/sm_121f; without it
//         NVFP4 kernels fall back and run about 32% slower than FP8, so FP8 stays the choice
//         unless the build targets sm_121a. Which libraries carry such code is `sparkdoc
//         audit`'s question.
//   INFO  12.0 (RTX PRO / GeForce Blackwell): the same family rule, with sm_120a.
//   INFO  any other capability: not SM12x, the rule does not apply.
//   SKIP  no GPU compute capability read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks::g7 {

namespace {

// Which packages carry GPU code that can use NVFP4 on this GPU, from the native-code audit:
// " NVFP4-capable code in: vllm, ...; none in: torch" or "" without an audit.
std::string nvfp4_packages(const Snapshot& s, const Workload& w, const facts::Platform& p,
                           std::vector<std::string>& details) {
  std::optional<NativeVerdict> a = native_verdict(s, w, p);
  if (!a || !a->target) return "";
  std::vector<std::string> with;
  std::vector<std::string> without;
  for (const PackageVerdict& pkg : a->packages) {
    if (pkg.gpu_files == 0 || pkg.gpu == CodeRuns::kDoesNotRun) continue;
    (pkg.nvfp4 ? with : without).push_back(pkg.name);
  }
  for (const auto& n : audit_notes(*a, NoteTopic::kNvfp4, Severity::kInfo)) details.push_back(n);
  if (with.empty() && without.empty()) return "";
  if (with.empty()) return "; no installed package carries NVFP4-capable code (sparkdoc audit)";
  return fmt::format("; NVFP4-capable code in: {} (sparkdoc audit)", join(with, ", "));
}

// flashinfer-cubin in the judged environment, as "flashinfer-cubin 0.6.11"; "" when absent.
std::string flashinfer_cubin(const Snapshot& s) {
  if (!s.python.ok()) return "";
  const pyenv::PythonEnv* env = facts::judged_env(*s.python);
  if (env == nullptr) return "";
  const pyenv::Distribution* d = facts::find_dist(*env, "flashinfer-cubin");
  return d == nullptr ? "" : fmt::format("flashinfer-cubin {}", d->version);
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& p) {
  constexpr std::string_view kId = "G7";
  if (!p.compute_capability && !w.arch) {
    std::string why = p.kind == facts::PlatformKind::kNoGpu
                          ? "no NVIDIA GPU could be read"
                          : "the GPU's compute capability was not read";
    return make_finding(kId, Verdict::kSkip, fmt::format("{} ({})", why, join(p.evidence, "; ")));
  }
  // --arch judges the native code for another GPU: the NVFP4 rule follows it.
  const gpu::ComputeCapability cc = w.arch ? *w.arch : *p.compute_capability;
  std::string name = w.arch               ? std::string("--arch")
                     : p.gpu_name.empty() ? std::string("GPU")
                                          : p.gpu_name;
  if (cc.major == 12 && cc.minor == 1) {
    std::vector<std::string> details;
    std::string packages = nvfp4_packages(s, w, p, details);
    if (std::string cubin = flashinfer_cubin(s); !cubin.empty()) {
      return make_finding(
          kId, Verdict::kWarn,
          fmt::format("{} is installed: its cubins are built for Sm100a/Sm100f/Sm103a only, "
                      "and FlashInfer's loader falls through to a wrong-architecture one on "
                      "SM121 (degenerate NVFP4 MoE output, FP4 GEMM errors; "
                      "flashinfer-ai/flashinfer#3294). GB10 does not need it: pip uninstall "
                      "flashinfer-cubin (FlashInfer JIT-builds for 12.1a){}",
                      cubin, packages),
          details);
    }
    return make_finding(
        kId, Verdict::kPass,
        std::string(w.arch ? "SM121 (12.1) asked for with --arch" : "SM121 (12.1) detected") +
            "; NVFP4 kernels need sm_121a (or sm_120f/121f) "
            "code or they run ~32% slower than FP8 — stay on FP8 unless the build "
            "targets sm_121a" +
            packages,
        details);
  }
  if (cc.major == 12 && cc.minor == 0) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("compute capability 12.0 ({}): SM120 runs NVFP4 at full "
                                    "speed only from sm_120a/sm_120f code; the sm_121a rule is "
                                    "GB10's",
                                    name));
  }
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("compute capability {}.{} ({}): not SM12x; the NVFP4/sm_121a "
                                  "rule does not apply",
                                  cc.major, cc.minor, name));
}

}  // namespace
}  // namespace sparkdoc::checks::g7

namespace sparkdoc::checks {

const CheckInfo& g7_nvfp4() {
  static constexpr CheckInfo kInfo{
      .id = "G7",
      .title = "NVFP4 slower than FP8 on SM121",
      .reads = "the GPU's compute capability (NVML or CUDA)",
      .symptom = "Switching inference from FP8 to NVFP4 makes it slower, not faster",
      .cause =
          "SM121 has the fast FP4 conversion instructions only in code compiled for sm_121a (or "
          "the sm_120f/121f family targets); generic builds fall back and run about 32% slower "
          "than FP8. Revised from the field reports of 2026: the seed named sm_121a alone, but "
          "sm_120f/121f SASS and compute_120f PTX run on 12.1 and can use NVFP4, and a 12.0 or "
          "12.0f build is never one that cannot run here; sm_120a can neither. flashinfer-cubin "
          "ships only Sm100a/Sm100f/Sm103a cubins, and vLLM up to v0.29.0 picks a W4A16 "
          "fallback kernel.",
      .how_checked =
          "Reads the compute capability; on 12.1 states which code NVFP4 kernels need (sparkdoc "
          "audit inspects the libraries themselves) and warns when flashinfer-cubin is "
          "installed in the judged environment.",
      .fix =
          "Stay on FP8 unless the kernels are built for sm_121a or the 12.0f/12.1f family; "
          "remove flashinfer-cubin on GB10; on vLLM up to v0.29.0 set "
          "VLLM_DISABLED_KERNELS=FlashInferCuteDslNvFp4W4A16LinearKernel (fixed by PR#55170).",
      .source =
          "002 G7; field 2026 §5: flashinfer-ai/flashinfer#3294, vllm-project/vllm PR#52708, "
          "PR#55170 (2026-09-08)",
      .keywords =
          "nvfp4 fp4 fp8 slower quantization quantized sm121 sm_121a sm120 blackwell cutlass "
          "flashinfer precision",
      .run = &g7::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
