// G9 container first, not bare pip (002 G9; reference §0, §4).
//
// Rule: decide containment from marker files (/.dockerenv, /run/.containerenv,
// /.singularity.d), PID 1's container= variable and mountinfo (docker, kubepods), with an
// overlay root as weaker evidence; never from "docker" in /proc/1/cgroup, which under cgroup v2
// reads "0::/" inside Docker (the bug in the seed tooling this check replaces). The NGC image
// comes from NVIDIA_PYTORCH_VERSION / NVIDIA_PRODUCT_NAME.
//   PASS  inside a container.
//   WARN  inside an NGC image whose torch lacks NGC's build tag ("nv" in the local version,
//         2.9.0a0+145a3a7.nv25.10): a pip install replaced NGC's torch.
//   WARN  bare host: prefer an NGC or Unsloth container; name any pair that drifted from the
//         dated known-good matrix (torch/triton, unsloth/transformers; known_good_matrix.cpp).
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/known_good_matrix.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/version_compare.h"
#include "facts/container.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks::g9 {
namespace {

constexpr std::string_view kId = "G9";

bool has_ngc_tag(std::string_view version) {
  auto plus = version.find('+');
  return plus != std::string_view::npos && contains(version.substr(plus + 1), "nv");
}

// "torch 2.9.1 expects triton 3.5, found 3.4.0" for each drifted pair.
std::vector<std::string> drift(const pyenv::PythonEnv& env) {
  std::vector<std::string> out;
  if (auto torch = facts::torch_version(env)) {
    const pyenv::Distribution* triton = facts::find_dist(env, "triton");
    if (!triton) triton = facts::find_dist(env, "pytorch-triton");
    auto want = expected_triton(*torch);
    if (triton && want && !same_release_prefix(triton->version, *want, 2)) {
      out.push_back(
          fmt::format("torch {} expects triton {}, found {}", *torch, *want, triton->version));
    }
  }
  const pyenv::Distribution* unsloth = facts::find_dist(env, "unsloth");
  const pyenv::Distribution* transformers = facts::find_dist(env, "transformers");
  if (unsloth && transformers) {
    auto want = expected_transformers(unsloth->version);
    if (want && compare_versions(transformers->version, *want) != 0) {
      out.push_back(fmt::format("unsloth {} expects transformers {}, found {}", unsloth->version,
                                *want, transformers->version));
    }
  }
  return out;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  facts::Container c = facts::detect_container(s);
  std::vector<std::string> details;
  for (const auto& e : c.evidence) details.push_back("evidence: " + e);
  const pyenv::PythonEnv* env = s.python.ok() ? facts::judged_env(*s.python) : nullptr;

  if (c.inside) {
    std::string what = c.strong
                           ? fmt::format("running inside a container ({}", c.kind)
                           : fmt::format("probably inside a container ({}", c.evidence.front());
    if (c.ngc_image) what += "; " + *c.ngc_image;
    what += ")";
    if (c.ngc_pytorch && env) {
      if (auto torch = facts::torch_version(*env); torch && !has_ngc_tag(*torch)) {
        return make_finding(
            kId, Verdict::kWarn,
            fmt::format("{}, but torch {} lacks NGC's build tag (e.g. 2.9.0a0+145a3a7.nv25.10): "
                        "a pip install replaced the image's torch; start from a fresh container "
                        "and install with the image's pip constraints (PIP_CONSTRAINT)",
                        what, *torch),
            details);
      }
    }
    return make_finding(kId, Verdict::kPass, what, details);
  }

  std::string line = "bare host — prefer an NGC or Unsloth container";
  if (env) {
    auto drifted = drift(*env);
    if (!drifted.empty()) {
      line += fmt::format("; drift from the known-good matrix ({}): {}", kKnownGoodMatrixDate,
                          join(drifted, "; "));
    }
  }
  return make_finding(kId, Verdict::kWarn, line, details);
}

}  // namespace
}  // namespace sparkdoc::checks::g9

namespace sparkdoc::checks {

const CheckInfo& g9_container() {
  static constexpr CheckInfo kInfo{
      .id = "G9",
      .title = "Container first, not bare pip",
      .reads =
          "container markers (/.dockerenv, /run/.containerenv, /.singularity.d, PID 1's "
          "container=, mountinfo), NGC image variables, torch/triton/transformers/unsloth "
          "versions",
      .symptom =
          "A bare pip environment that worked yesterday breaks after an unrelated pip install, "
          "or two identical-looking environments behave differently",
      .cause =
          "Bare pip lets torch, Triton, xformers and transformers drift apart and nothing pins "
          "them to SM121; inside an NGC image, a pip install can replace the image's own torch "
          "build.",
      .how_checked =
          "Decides container or bare host from marker files and mounts (never from "
          "/proc/1/cgroup, which reads 0::/ inside Docker under cgroup v2), names the NGC image, "
          "checks NGC's torch is still the image's, and on a bare host compares version pairs "
          "with a dated known-good matrix.",
      .fix =
          "Work in an NGC PyTorch container or Unsloth's DGX Spark image; if bare pip is "
          "unavoidable, follow NVIDIA's install order and pin versions; never pip install a "
          "torch over an NGC image's.",
      .source = "002 G9",
      .keywords =
          "container docker bare pip environment broke breaks after install drift triton "
          "xformers transformers ngc image reproducible venv",
      .run = &g9::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
