// F8 the "cuda capability 12.1" warning torch prints on GB10. torch warns whenever sm_121 is
// not in its arch list, even when its sm_120 SASS or compute_120 PTX runs there, as the
// 12.0-family builds do (pytorch#172629, open 2026-01-16; still printed by 2.13.0+cu130):
//   PASS  sm_121 is in the list (no warning), or sm_120 / compute_120 is: the warning is false,
//         and this says so, so nobody rebuilds torch for it;
//   WARN  no 12.x code at all: the warning is true (only older PTX, JIT-compiled, or nothing);
//   SKIP  no torch or no arch list read; not compute capability 12.1.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f8 {
namespace {

bool has_word(std::string_view list, std::string_view word) {
  for (std::string_view w : split_ws(list)) {
    if (w == word) return true;
  }
  return false;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "F8";
  const pyenv::TorchInfo* torch = nullptr;
  if (s.python.ok()) {
    for (const pyenv::PythonEnv& e : *s.python) {
      if (e.torch.ok()) {
        torch = &*e.torch;
        break;
      }
    }
  }
  if (torch == nullptr) return make_finding(kId, Verdict::kSkip, "no torch found");
  if (!torch->arch_list.ok()) {
    return make_finding(kId, Verdict::kSkip,
                        "torch's arch list not read: " + torch->arch_list.why_not());
  }
  std::string version = torch->version.value_or("torch");
  const std::string& list = *torch->arch_list;
  if (has_word(list, "sm_121") || has_word(list, "sm_121a")) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("torch {} carries sm_121 code: it prints no capability "
                                    "warning",
                                    version));
  }
  if (has_word(list, "sm_120") || has_word(list, "compute_120") || has_word(list, "sm_120f")) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("torch {} prints \"Found GPU0 NVIDIA GB10 which is of cuda "
                                    "capability 12.1 ... (12.0)\", but its 12.0 code runs on 12.1 "
                                    "(pytorch#172629): ignore the warning, do not rebuild torch "
                                    "for it",
                                    version));
  }
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("torch {} has no 12.x code ({}): its capability warning is "
                                  "true; install a cu130 build (https://download.pytorch.org/"
                                  "whl/cu130) or an NGC PyTorch image",
                                  version, list));
}

std::optional<std::string> applies(const Snapshot&, const facts::Platform& p) {
  if (p.compute_capability && *p.compute_capability == gpu::ComputeCapability{12, 1}) {
    return std::nullopt;
  }
  return "torch prints this warning on compute capability 12.1 only (" + p.description + ")";
}

}  // namespace
}  // namespace sparkdoc::checks::f8

namespace sparkdoc::checks {

const CheckInfo& f8_capability_warning() {
  static constexpr CheckInfo kInfo{
      .id = "F8",
      .title = "The false \"cuda capability 12.1\" warning",
      .reads = "torch's arch list (libtorch's compiled targets); the GPU's compute capability",
      .symptom =
          "\"Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. Minimum and Maximum "
          "cuda capability supported by this version of PyTorch is (8.0) - (12.0)\", or "
          "\"Your installed torch==2.13.0+cu130 does not include kernels for this GPU\"",
      .cause =
          "torch compares the GPU with the highest sm_ in its arch list and warns when 12.1 "
          "is not there, although sm_120 SASS and compute_120 PTX run on 12.1 (12.0 family). "
          "The warning is false for cu130 wheels and NGC images (12.0+PTX).",
      .how_checked = "Looks for sm_121, then sm_120 or compute_120, in torch's arch list.",
      .fix =
          "With sm_120 or compute_120 in the list: ignore the warning. With no 12.x code: "
          "install a cu130 torch or an NGC PyTorch image.",
      .source =
          "field 2026 §5: pytorch/pytorch#172629 (2026-01-16, open), "
          "eugr/spark-vllm-docker#15, vllm-project/vllm PR#52708",
      .keywords =
          "cuda capability 12.1 warning minimum and maximum supported pytorch 12.0 "
          "does not include kernels for this gpu sm_121 sm_120 false positive",
      .run = &f8::judge,
      .applies = &f8::applies,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
