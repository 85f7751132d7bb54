// S9 native extensions run on this GPU (000 §2; sparkdoc audit).
//
// Rule, from the native-code audit of torch's environment judged for this GPU:
//   FAIL  a package's GPU code has nothing that runs on this compute capability, or a known
//         package's rule fails (causal-conv1d without its extension, bitsandbytes without a
//         library for torch's CUDA).
//   WARN  only PTX runs (JIT on first use), a known package's rule warns (mamba-ssm
//         without selective_scan_cuda), or a shared object was built for another machine
//         (an x86_64 wheel on a Spark: not loadable here, and not judged).
//   PASS  every package with GPU code has SASS for this GPU.
//   SKIP  no audit, or it was judged for another GPU.
// flash-attn is G2's and libraries are G1's: S9 leaves them out.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s9 {

namespace {

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& p) {
  constexpr std::string_view kId = "S9";
  std::string why;
  std::optional<NativeVerdict> a = native_verdict(s, w, p, &why);
  if (!a) return make_finding(kId, Verdict::kSkip, why);
  if (!a->target) {
    return make_finding(kId, Verdict::kSkip, "no GPU read: GPU code was not judged");
  }
  const std::vector<std::string_view> except = {"flash-attn"};
  std::vector<std::string> fails = audit_notes(*a, NoteTopic::kGpuCode, Severity::kFail, except);
  for (auto& n : audit_notes(*a, NoteTopic::kPackage, Severity::kFail, except))
    fails.push_back(std::move(n));
  std::vector<std::string> warns = audit_notes(*a, NoteTopic::kGpuCode, Severity::kWarn, except);
  for (auto& n : audit_notes(*a, NoteTopic::kPackage, Severity::kWarn, except))
    warns.push_back(std::move(n));
  for (auto& n : audit_notes(*a, NoteTopic::kArchitecture, Severity::kWarn))
    warns.push_back(std::move(n));
  auto more = [](const std::vector<std::string>& v) {
    return v.size() > 1 ? fmt::format(" (+{} more)", v.size() - 1) : std::string();
  };
  if (!fails.empty()) {
    std::vector<std::string> details = fails;
    details.insert(details.end(), warns.begin(), warns.end());
    return make_finding(kId, Verdict::kFail, fails.front() + more(fails), details);
  }
  if (!warns.empty()) return make_finding(kId, Verdict::kWarn, warns.front() + more(warns), warns);
  size_t packages = 0;
  for (const PackageVerdict& pkg : a->packages) packages += pkg.gpu_files > 0;
  return make_finding(
      kId, Verdict::kPass,
      fmt::format("{} package{} with GPU code, {} file{}: all carry SASS for {}", packages,
                  packages == 1 ? "" : "s", a->gpu_files, a->gpu_files == 1 ? "" : "s",
                  audit::compute_capability_text(a->target->cc)));
}

}  // namespace
}  // namespace sparkdoc::checks::s9

namespace sparkdoc::checks {

const CheckInfo& s9_native_extensions() {
  static constexpr CheckInfo kInfo{
      .id = "S9",
      .title = "Native extensions run on this GPU",
      .reads =
          "the native-code audit of torch's environment: each shared object's SASS and PTX "
          "targets against the GPU's compute capability, and the rules for causal-conv1d, "
          "mamba-ssm, bitsandbytes, xformers and vllm",
      .symptom =
          "\"no kernel image is available for execution on the device\", \"ImportError: "
          "selective_scan_cuda\", bitsandbytes falling back to CPU, a first step that stalls "
          "for minutes while the driver JIT-compiles PTX, or \"This kernel only supports "
          "sm120.\" then cudaErrorLaunchFailure",
      .cause =
          "Wheels built before Blackwell carry kernels for sm_80/sm_90 only, and a source build "
          "inside docker build sees no GPU: mamba-ssm then skips selective_scan_cuda silently "
          "and causal-conv1d builds without sm_120/sm_121. vLLM's CUTLASS kernels for SM 12.x "
          "carry a guard that compiles them only for 12.0 and traps elsewhere: a build with "
          "12.1 in its list gets sm_121 cubins that the driver prefers on GB10 and that trap. "
          "pip checks none of this.",
      .how_checked =
          "Reads the fatbin headers of every shared object (sparkdoc audit) and judges each "
          "package's code for the GPU's compute capability: SASS that runs, PTX that the driver "
          "must JIT, or nothing, and reads the sm_121 cubins whole for the sm120-only guard's "
          "text; then applies the known packages' rules. A shared object built "
          "for another machine (an x86_64 wheel on an aarch64 Spark) is named, not judged: "
          "the loader refuses it. flash-attn is G2's, libraries G1's.",
      .fix =
          "Rebuild the named package with TORCH_CUDA_ARCH_LIST including the GPU "
          "(\"12.0;12.1+PTX\" on a Spark; 12.1a for NVFP4), with CAUSAL_CONV1D_FORCE_BUILD=TRUE "
          "or a visible GPU for mamba-ssm; build bitsandbytes with -DCOMPUTE_CAPABILITY "
          "including 121; for the sm120-only guard, a vLLM whose guard admits the family "
          "(enable_sm120_family) or a build for 12.0f instead of 12.1; run sparkdoc audit for "
          "the full list.",
      .source = "000 §2",
      .keywords =
          "no kernel image available device sm_121 sm_120 blackwell mamba mamba-ssm "
          "selective_scan causal-conv1d causal_conv1d bitsandbytes xformers vllm extension arch "
          "list ptx jit torch_cuda_arch_list audit sm120 only trap guard cudaErrorLaunchFailure "
          "enable_sm120_only",
      .run = &s9::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
