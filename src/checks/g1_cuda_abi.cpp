// G1 CUDA 12/13 ABI mismatch (002 G1; reference §5.1 G1).
//
// Rule: judge torch in the first Python environment that has it.
//   FAIL  a CPU-only torch (no torch.version.cuda, e.g. "2.9.1+cpu") on a machine with an
//         NVIDIA GPU: pip picked the wrong wheel (vllm #36099 saw exactly this on a Spark).
//   FAIL  torch's CUDA major is newer than the driver supports (NVML/cuDriverGetVersion,
//         13000 -> 13.0).
//   FAIL  on DGX Spark, torch built for CUDA < 13: Spark ships CUDA 13, the fix is cu130 wheels.
//   FAIL  a CUDA library torch needs does not resolve (libcuda.so.1 is the driver's: judged by
//         whether a driver was read), or implies another CUDA major than torch's (a
//         libcudart.so.12 need under a CUDA 13.0 torch).
//   WARN  nvidia-*-cuNN distributions for another CUDA major installed beside torch.
//   FAIL  any other package's library needs a CUDA library the loader would not find, or one
//         of another CUDA major than torch's (the native-code audit; names package and soname).
//   PASS  otherwise.
// Threshold: CUDA majors must agree exactly; minor versions are left alone because CUDA's
// minor-version compatibility lets a 13.2 build run on a 13.0 driver.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/cuda_sonames.h"
#include "core/names.h"
#include "core/strings.h"
#include "core/version_compare.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks::g1 {
namespace {

constexpr std::string_view kId = "G1";
constexpr std::string_view kFixCu130 =
    "reinstall torch from https://download.pytorch.org/whl/cu130 or use a matched container "
    "(NGC PyTorch)";

struct DriverCuda {
  std::optional<int> encoded;  // 13000
  std::string source;          // "NVML", "CUDA driver"
  std::string missing_reason;
};

DriverCuda driver_cuda(const Snapshot& s) {
  DriverCuda d;
  std::vector<std::string> reasons;
  if (s.gpu.nvml.ok() && s.gpu.nvml->cuda_driver_version.ok()) {
    d.encoded = *s.gpu.nvml->cuda_driver_version;
    d.source = "NVML";
    return d;
  }
  reasons.push_back("NVML: " + (s.gpu.nvml.ok() ? s.gpu.nvml->cuda_driver_version.reason()
                                                : s.gpu.nvml.reason()));
  if (s.gpu.cuda.ok() && s.gpu.cuda->driver_version.ok()) {
    d.encoded = *s.gpu.cuda->driver_version;
    d.source = "CUDA driver";
    return d;
  }
  reasons.push_back("CUDA: " +
                    (s.gpu.cuda.ok() ? s.gpu.cuda->driver_version.reason() : s.gpu.cuda.reason()));
  d.missing_reason = join(reasons, "; ");
  return d;
}

std::string cuda_text(int encoded) {
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

std::string needed_by_text(const pyenv::SonameNeed& need) {
  if (need.needed_by.empty()) return "torch";
  if (need.needed_by.size() == 1) return need.needed_by.front();
  return fmt::format("{} and {} more", need.needed_by.front(), need.needed_by.size() - 1);
}

bool driver_was_read(const Snapshot& s) {
  return s.gpu.nvml.ok() || (s.gpu.cuda.ok() && s.gpu.cuda->driver_version.ok());
}

// torch, its CUDA libraries and the driver: the rule above before the native-code audit.
Finding judge_torch(const Snapshot& s, const facts::Platform& platform) {
  if (!s.python.ok()) {
    return make_finding(kId, Verdict::kSkip, "no Python environment read: " + s.python.reason());
  }
  const auto& envs = *s.python;
  if (envs.empty()) return make_finding(kId, Verdict::kSkip, "no Python environment found");
  const pyenv::PythonEnv* env = facts::first_torch_env(envs);
  if (!env) {
    std::vector<std::string> where;
    for (const auto& e : envs) where.push_back(facts::describe_env(e) + ": " + e.torch.reason());
    return make_finding(kId, Verdict::kSkip,
                        fmt::format("torch not found in {} Python environment{} ({}); name the "
                                    "training environment with --python PATH, or activate it",
                                    envs.size(), envs.size() == 1 ? "" : "s", join(where, "; ")));
  }
  const pyenv::TorchInfo& torch = *env->torch;
  std::string version = torch.version.ok() ? *torch.version : "(version unread)";
  std::vector<std::string> details{"environment: " + facts::describe_env(*env)};
  DriverCuda driver = driver_cuda(s);
  bool has_gpu = platform.kind != facts::PlatformKind::kNoGpu;

  if (!torch.cuda.ok()) {
    if (torch.cuda.missing().why != Why::kAbsent) {
      return make_finding(kId, Verdict::kSkip,
                          fmt::format("torch {}: its CUDA version could not be read ({})", version,
                                      torch.cuda.reason()),
                          details);
    }
    if (!has_gpu) {
      return make_finding(
          kId, Verdict::kInfo,
          fmt::format("torch {} is a CPU-only build and no NVIDIA GPU was read", version), details);
    }
    return make_finding(kId, Verdict::kFail,
                        fmt::format("torch {} is a CPU-only build (no CUDA) on a machine with an "
                                    "NVIDIA GPU: {}",
                                    version, kFixCu130),
                        details);
  }

  std::string torch_cuda = *torch.cuda;
  auto segments = release_segments(torch_cuda);
  if (segments.empty()) {
    return make_finding(
        kId, Verdict::kSkip,
        fmt::format("torch {} reports CUDA '{}', which is not a version", version, torch_cuda),
        details);
  }
  auto torch_major = static_cast<int>(segments.front());
  std::string driver_text = driver.encoded
                                ? "driver supports CUDA " + cuda_text(*driver.encoded)
                                : "driver CUDA version not read (" + driver.missing_reason + ")";

  if (driver.encoded && torch_major > *driver.encoded / 1000) {
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("torch {} is built against CUDA {} but the driver supports only CUDA {}: "
                    "install a torch wheel for CUDA {} or upgrade the driver",
                    version, torch_cuda, cuda_text(*driver.encoded), *driver.encoded / 1000),
        details);
  }
  if (platform.kind == facts::PlatformKind::kDgxSpark && torch_major < 13) {
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("torch {} is built against CUDA {}; DGX Spark ships CUDA 13, and CUDA {} "
                    "wheels fail with undefined symbols or segfaults there: {}",
                    version, torch_cuda, torch_major, kFixCu130),
        details);
  }

  size_t resolved = 0;
  std::vector<std::string> unresolved;
  std::vector<std::string> foreign;
  int foreign_major = 0;
  std::string soname_note;
  if (torch.cuda_sonames.ok()) {
    for (const auto& need : *torch.cuda_sonames) {
      bool is_driver = need.soname.starts_with("libcuda.so");
      if (need.found || (is_driver && driver_was_read(s))) {
        ++resolved;
      } else if (is_driver) {
        unresolved.push_back(
            fmt::format("{} (the driver's library, needed by {}) is not found "
                        "and no driver was read",
                        need.soname, needed_by_text(need)));
      } else {
        unresolved.push_back(
            fmt::format("{} needed by {} does not resolve", need.soname, needed_by_text(need)));
      }
      if (auto major = cuda_major_of_soname(need.soname); major && *major != torch_major) {
        foreign.push_back(
            fmt::format("{} (CUDA {}, for {})", need.soname, *major, needed_by_text(need)));
        if (foreign_major == 0) foreign_major = *major;
      }
    }
  } else {
    soname_note = "; CUDA libraries not audited (" + torch.cuda_sonames.reason() + ")";
  }

  if (!foreign.empty()) {
    for (const auto& f : foreign) details.push_back("foreign CUDA library: " + f);
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("torch {} is built against CUDA {} but its libraries load {}: a mixed CUDA "
                    "{}/{} install; "
                    "{}",
                    version, torch_cuda, join(foreign, ", "), std::min(torch_major, foreign_major),
                    std::max(torch_major, foreign_major), kFixCu130),
        details);
  }
  if (!unresolved.empty()) {
    for (const auto& u : unresolved) details.push_back("unresolved: " + u);
    std::string fix = fmt::format(
        "install the nvidia-*-cu{} wheels torch depends on (pip install torch from "
        "the cu{}0 index brings them), or put the CUDA {} libraries on "
        "LD_LIBRARY_PATH",
        torch_major, torch_major, torch_major);
    if (!driver_was_read(s)) {
      fix += "; for libcuda.so.1, install the NVIDIA driver or expose the GPU to the container";
    }
    return make_finding(
        kId, Verdict::kFail,
        fmt::format("torch {} (CUDA {}): {}: {}", version, torch_cuda,
                    unresolved.size() > 2 ? fmt::format("{}, {} and {} more", unresolved[0],
                                                        unresolved[1], unresolved.size() - 2)
                                          : join(unresolved, ", "),
                    fix),
        details);
  }

  // Distributions such as nvidia-cublas-cu12 belong to another CUDA major than torch's: pip
  // keeps them beside a CUDA 13 torch, and anything that loads them mixes the two ABIs.
  std::vector<std::string> mixed;
  std::vector<std::string> mixed_names;
  std::string own_suffix = fmt::format("-cu{}", torch_major);
  for (const auto& [key, dist] : env->packages) {
    std::string name = pep503_name(dist.name.empty() ? key : dist.name);
    if (!name.starts_with("nvidia-")) continue;
    auto cu = name.rfind("-cu");
    if (cu == std::string::npos || cu + 3 >= name.size()) continue;
    std::string_view suffix = std::string_view(name).substr(cu);
    if (suffix == own_suffix) continue;
    if (suffix.find_first_not_of("0123456789", 3) != std::string_view::npos) continue;
    mixed.push_back(dist.version.empty() ? name : name + " " + dist.version);
    mixed_names.push_back(name);
  }
  if (!mixed.empty()) {
    for (const auto& m : mixed) details.push_back("other CUDA major: " + m);
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("torch {} is built against CUDA {}, but {} for another CUDA major {} "
                    "installed beside it: pip uninstall {} unless another package needs {}",
                    version, torch_cuda, join(mixed, ", "), mixed.size() == 1 ? "is" : "are",
                    join(mixed_names, " "), mixed.size() == 1 ? "it" : "them"),
        details);
  }

  std::string libraries = torch.cuda_sonames.ok()
                              ? fmt::format("; all {} CUDA librar{} torch needs resolve", resolved,
                                            resolved == 1 ? "y" : "ies")
                              : soname_note;
  return make_finding(kId, Verdict::kPass,
                      fmt::format("torch {} built against CUDA {}; {}{}", version, torch_cuda,
                                  driver_text, libraries),
                      details);
}

// Libraries of other packages (sparkdoc audit): a CUDA library the loader would not find, or
// one of another CUDA major than torch's, fails as torch's own would.
Finding with_native_libraries(Finding f, const Snapshot& s, const Workload& w,
                              const facts::Platform& platform) {
  // The libraries' verdicts do not depend on the GPU.
  std::optional<NativeVerdict> a = native_verdict(s, w, platform);
  if (!a) return f;
  std::vector<std::string> fails = audit_notes(*a, NoteTopic::kLibraries, Severity::kFail);
  if (fails.empty()) return f;
  std::vector<std::string> details = f.details;
  details.insert(details.end(), fails.begin(), fails.end());
  if (f.verdict == Verdict::kFail) {
    return make_finding(kId, Verdict::kFail,
                        fmt::format("{}; and {}{}", f.detail, fails.front(),
                                    fails.size() > 1 ? fmt::format(" (+{} more)", fails.size() - 1) : ""),
                        details);
  }
  return make_finding(kId, Verdict::kFail,
                      fmt::format("{}{}", fails.front(),
                                  fails.size() > 1 ? fmt::format(" (+{} more)", fails.size() - 1) : ""),
                      details);
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& platform) {
  return with_native_libraries(judge_torch(s, platform), s, w, platform);
}

}  // namespace
}  // namespace sparkdoc::checks::g1

namespace sparkdoc::checks {

const CheckInfo& g1_cuda_abi() {
  static constexpr CheckInfo kInfo{
      .id = "G1",
      .title = "CUDA 12/13 ABI mismatch",
      .reads =
          "Python environments: torch's version, torch.version.cuda, the CUDA sonames torch's "
          "libraries need and where they resolve, nvidia-*-cuNN distributions; the driver's CUDA "
          "version from NVML or the CUDA driver API",
      .symptom =
          "ImportError naming an undefined CUDA symbol, \"libcudart.so.12: cannot open shared "
          "object file\", or a segfault at the first .cuda() call",
      .cause =
          "Most PyPI wheels are built against CUDA 12 (libcudart.so.12) while DGX Spark ships "
          "CUDA 13. pip never compares CUDA ABIs, so the mismatch surfaces only at import or at "
          "the first kernel launch. A CPU-only torch (+cpu) pulled in by another package fails "
          "the same way.",
      .how_checked =
          "Takes torch from the first Python environment that has it; compares its CUDA major "
          "with the driver's and, on a Spark, with 13; checks that every CUDA library torch "
          "needs resolves and belongs to torch's CUDA major; looks for nvidia-*-cu12 wheels "
          "beside a CUDA 13 torch.",
      .fix =
          "Reinstall torch from https://download.pytorch.org/whl/cu130 (pip install torch "
          "--index-url https://download.pytorch.org/whl/cu130) or work in a matched container "
          "such as NGC PyTorch; remove stray nvidia-*-cu12 wheels.",
      .source = "002 G1",
      .keywords =
          "undefined symbol importerror segfault libcudart cudart so.12 so.13 cu130 cu128 cu12 "
          "cu13 wheel abi cpu build torch.version.cuda driver mismatch cannot open shared object "
          "import error",
      .run = &g1::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
