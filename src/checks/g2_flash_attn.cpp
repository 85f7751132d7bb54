// G2 flash-attn (002 G2; reference §5.1 G2).
//
// Rule, in the environment torch lives in (else the first one):
//   PASS  flash-attn not installed: SDPA is used, the safe default on Spark.
//   WARN  flash-attn beside unsloth, anywhere: Unsloth's auto-detection prefers flash-attn and
//         silently drops an explicit attn_implementation="sdpa".
//   WARN  flash-attn outside an NGC image on DGX Spark: there is no aarch64/sm_121 wheel for
//         bare pip, so it was built locally or is a wrong build; whether it imports is the
//         question (a native-code audit of it is `sparkdoc audit`'s job).
//   FAIL  the native-code audit says its extension is missing, does not run on this GPU, or
//         needs a library that will not load.
//   INFO  on DGX Spark outside NGC when the audit shows SASS for 12.1 and every library resolves.
//   INFO  flash-attn inside an NGC image (NGC ships a working SM121 build), or on another
//         platform, where the Spark wheel gap does not apply.
//   SKIP  no Python environment.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "facts/container.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks::g2 {
namespace {

constexpr std::string_view kId = "G2";

std::string with_version(std::string_view name, const pyenv::Distribution& d) {
  return d.version.empty() ? std::string(name) : fmt::format("{} {}", name, d.version);
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& platform) {
  if (!s.python.ok()) {
    return make_finding(kId, Verdict::kSkip, "no Python environment read: " + s.python.reason());
  }
  const pyenv::PythonEnv* env = facts::judged_env(*s.python);
  if (!env) return make_finding(kId, Verdict::kSkip, "no Python environment found");
  std::vector<std::string> details{"environment: " + facts::describe_env(*env)};

  const pyenv::Distribution* fa = facts::find_dist(*env, "flash-attn");
  if (!fa) {
    return make_finding(kId, Verdict::kPass,
                        platform.kind == facts::PlatformKind::kDgxSpark
                            ? "flash-attn not installed; SDPA will be used (the safe default on "
                              "Spark)"
                            : "flash-attn not installed; SDPA will be used",
                        details);
  }
  std::string fa_text = with_version("flash-attn", *fa);

  // The native-code audit knows whether its extension is there, loads and runs on this GPU.
  std::optional<NativeVerdict> native = native_verdict(s, w, platform);
  const PackageVerdict* fa_native = native ? audited_package(*native, "flash-attn") : nullptr;
  if (fa_native != nullptr) {
    for (const NativeNote& n : fa_native->notes) {
      if (n.severity == Severity::kFail) {
        return make_finding(kId, Verdict::kFail, fmt::format("{}: {}", fa_text, n.text), details);
      }
    }
  }

  if (const pyenv::Distribution* unsloth = facts::find_dist(*env, "unsloth")) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} and {} are both installed: Unsloth prefers flash-attn even when "
                    "attn_implementation=\"sdpa\" is asked for; to force SDPA, set Unsloth's "
                    "HAS_FLASH_ATTENTION to False before loading the model, or pip uninstall "
                    "flash-attn",
                    fa_text, with_version("unsloth", *unsloth)),
        details);
  }

  facts::Container container = facts::detect_container(s);
  if (container.ngc_pytorch && container.ngc_image) {
    return make_finding(
        kId, Verdict::kInfo,
        fmt::format("{} inside {}: NGC ships a working SM121 build", fa_text, *container.ngc_image),
        details);
  }
  if (platform.kind == facts::PlatformKind::kDgxSpark && fa_native != nullptr &&
      fa_native->gpu == CodeRuns::kSass && fa_native->problems.empty()) {
    return make_finding(
        kId, Verdict::kInfo,
        fmt::format("{} in a bare-pip environment on DGX Spark: its extension carries SASS that "
                    "runs on 12.1 and its libraries resolve (a local build; sparkdoc audit)",
                    fa_text),
        details);
  }
  if (platform.kind == facts::PlatformKind::kDgxSpark) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} in a bare-pip environment on DGX Spark: no aarch64/sm_121 wheel exists "
                    "for bare pip, so this is a local build or a wrong one; check that "
                    "`python -c \"import flash_attn\"` works, or pip uninstall flash-attn and "
                    "use SDPA",
                    fa_text),
        details);
  }
  std::string cc = platform.compute_capability
                       ? fmt::format("compute capability {}.{}", platform.compute_capability->major,
                                     platform.compute_capability->minor)
                       : std::string("no GPU read");
  return make_finding(
      kId, Verdict::kInfo,
      fmt::format("{} installed ({}); the missing aarch64/sm_121 wheel is a DGX Spark problem",
                  fa_text, cc),
      details);
}

}  // namespace
}  // namespace sparkdoc::checks::g2

namespace sparkdoc::checks {

const CheckInfo& g2_flash_attn() {
  static constexpr CheckInfo kInfo{
      .id = "G2",
      .title = "flash-attn: skip the pip build, watch Unsloth's auto-detect",
      .reads =
          "Python environment: the flash-attn and unsloth distributions; container markers and "
          "NGC image variables; the platform",
      .symptom =
          "pip install flash-attn fails or hangs compiling on a Spark; or Unsloth trains with "
          "flash-attn although attn_implementation=\"sdpa\" was asked for",
      .cause =
          "No prebuilt flash-attn wheel covers aarch64 with sm_121, so bare pip compiles it from "
          "source. NGC containers ship a working SM121 build, and Unsloth prefers flash-attn "
          "whenever it can import it, silently overriding an SDPA request.",
      .how_checked =
          "Looks for flash-attn in torch's environment and for unsloth beside it, and tells an "
          "NGC image from a bare pip environment.",
      .fix =
          "On bare pip, leave flash-attn out: SDPA is the default and works. With Unsloth, force "
          "SDPA by setting its HAS_FLASH_ATTENTION flag to False before loading, or uninstall "
          "flash-attn.",
      .source = "002 G2",
      .keywords =
          "flash-attn flash_attn flashattention sdpa attention attn_implementation unsloth build "
          "hangs compile wheel backend wrong",
      .run = &g2::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
