// S9 native extensions run on this GPU (000 §2; sparkdoc audit).
//
// Rule, from the native-code audit of torch's environment judged for this GPU:
//   FAIL  a package's GPU code has nothing that runs on this compute capability, or a known
//         package's rule fails (causal-conv1d without its extension, bitsandbytes without a
//         library for torch's CUDA).
//   WARN  only PTX runs (JIT on first use), or a known package's rule warns (mamba-ssm
//         without selective_scan_cuda).
//   PASS  every package with GPU code has SASS for this GPU.
//   SKIP  no audit, or it was judged for another GPU.
// flash-attn is G2's and libraries are G1's: S9 leaves them out.
#include <fmt/format.h>

#include "checks/check_fns.h"
#include "checks/common.h"
#include "facts/platform.h"

namespace sparkdoc::checks {

Finding check_s9_native_extensions(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S9";
  std::string why;
  const audit::NativeAudit* a = native_audit(s, p, &why);
  if (a == nullptr) return make_finding(kId, Verdict::kSkip, why);
  if (a->target.empty()) {
    return make_finding(kId, Verdict::kSkip, "no GPU read: GPU code was not judged");
  }
  const std::vector<std::string_view> except = {"flash-attn"};
  std::vector<std::string> fails = audit_notes(*a, "gpu_code", "fail", except);
  for (auto& n : audit_notes(*a, "package", "fail", except)) fails.push_back(std::move(n));
  std::vector<std::string> warns = audit_notes(*a, "gpu_code", "warn", except);
  for (auto& n : audit_notes(*a, "package", "warn", except)) warns.push_back(std::move(n));
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
  for (const audit::PackageAudit& pkg : a->packages) packages += pkg.gpu_files > 0;
  return make_finding(kId, Verdict::kPass,
                      fmt::format("{} package{} with GPU code, {} file{}: all carry SASS for {}",
                                  packages, packages == 1 ? "" : "s", a->gpu_files,
                                  a->gpu_files == 1 ? "" : "s", a->target));
}

}  // namespace sparkdoc::checks
