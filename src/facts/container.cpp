#include "facts/container.h"

#include <fmt/format.h>

#include "core/strings.h"
#include "facts/environment.h"

namespace sparkdoc::facts {

namespace {

std::optional<std::string> ngc_image(const Snapshot& s) {
  const std::string* product = env_value(s, "NVIDIA_PRODUCT_NAME");
  const std::string* pytorch = env_value(s, "NVIDIA_PYTORCH_VERSION");
  const std::string* vllm = env_value(s, "NVIDIA_VLLM_VERSION");
  if (vllm && (!product || to_lower(*product) == "vllm")) return "NGC vLLM " + *vllm;
  if (pytorch) return "NGC PyTorch " + *pytorch;
  if (product && !product->empty()) return "NGC " + *product;
  return std::nullopt;
}

}  // namespace

// Order follows the reference's advice (§4): marker files, PID 1's container= variable,
// mount evidence, and the overlay root last because a bare host can boot from one too. The
// cgroup path is never evidence: under cgroup v2 a Docker container reads "0::/".
Container detect_container(const Snapshot& s) {
  Container v;
  const auto& m = s.container;
  auto found = [&](std::string_view kind, std::string evidence) {
    if (v.kind.empty()) v.kind = std::string(kind);
    v.evidence.push_back(std::move(evidence));
    v.inside = v.strong = true;
  };
  if (m.dockerenv) found("docker", "/.dockerenv");
  if (m.containerenv) found("podman", "/run/.containerenv");
  if (m.singularity) found("apptainer", "/.singularity.d");
  if (m.pid1_container_env && !m.pid1_container_env->empty()) {
    found(*m.pid1_container_env, "container=" + *m.pid1_container_env + " in PID 1's environment");
  }
  if (m.mountinfo_docker) found("docker", "mountinfo names /docker/containers/");
  if (m.mountinfo_kubepods) found("kubernetes", "mountinfo names kubepods");
  v.ngc_image = ngc_image(s);
  v.ngc_pytorch = env_value(s, "NVIDIA_PYTORCH_VERSION") != nullptr;
  if (!v.strong && m.mountinfo_overlay_root) {
    v.inside = true;
    v.kind = "overlay root";
    v.evidence.push_back("the root filesystem is an overlay mount (weak evidence)");
  }
  if (!v.inside && v.ngc_image) {
    // Enroot and similar runtimes leave no marker; an NGC image's variables are the only sign.
    v.inside = true;
    v.kind = "no marker";
    v.evidence.push_back("NGC image variables without a container marker (weak evidence)");
  }
  return v;
}

}  // namespace sparkdoc::facts
