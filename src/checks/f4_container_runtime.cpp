// F4 the container runtime: NVIDIA Container Toolkit, CDI and Docker (field reports 2026):
//   FAIL  daemon.json's default-runtime names a runtime it does not define ("unknown or invalid
//         runtime name: nvidia");
//   WARN  toolkit 1.19.1 with CDI on (host freezes under heavy Docker vLLM work,
//         nvidia-container-toolkit#1910, 2026-07-07; CUDA init failures, #1967); Docker from the
//         snap (it reads its own configuration, not the one the toolkit writes); Docker and the
//         toolkit with CDI off but no "nvidia" runtime in daemon.json;
//   INFO  no Docker here, or inside a container (the host's runtime is not visible);
//   PASS  otherwise, with the versions; SKIP when the packages were not recorded.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/container.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f4 {
namespace {

std::string version_of(const sys::PackageList& list, std::string_view name) {
  const sys::Package* p = find_package(list, name);
  return p ? upstream_version(p->version) : std::string();
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "F4";
  if (facts::detect_container(s).inside) {
    return make_finding(kId, Verdict::kInfo,
                        "inside a container: the host's Docker and toolkit are judged on the "
                        "host (run sparkdoc check there)");
  }
  if (!s.packages.ok() || !s.docker.ok()) {
    const auto& why = !s.packages.ok() ? s.packages.why_not() : s.docker.why_not();
    return make_finding(kId, Verdict::kSkip, "packages not read: " + why);
  }
  const sys::PackageList& pk = *s.packages;
  const sys::DockerSetup& d = *s.docker;
  std::string toolkit = version_of(pk, "nvidia-container-toolkit");
  std::string docker_ce = version_of(pk, "docker-ce");
  std::string docker_io = version_of(pk, "docker.io");
  bool docker = d.snap || d.docker_binary || !docker_ce.empty() || !docker_io.empty();
  if (!docker) {
    return make_finding(kId, Verdict::kInfo,
                        toolkit.empty()
                            ? "no Docker installed"
                            : "no Docker installed (nvidia-container-toolkit " + toolkit + " is)");
  }
  std::vector<std::string> parts;
  if (!docker_ce.empty()) parts.push_back("docker-ce " + docker_ce);
  if (!docker_io.empty()) parts.push_back("docker.io " + docker_io);
  if (d.snap) parts.push_back("Docker snap");
  parts.push_back(toolkit.empty() ? "no nvidia-container-toolkit" : "toolkit " + toolkit);
  const sys::DockerDaemon* daemon = d.daemon.get();
  bool cdi = (daemon && daemon->cdi.value_or(false)) || !d.cdi_specs.empty();
  parts.push_back(cdi ? "CDI on" : "CDI off");
  std::string head = join(parts, ", ");

  if (daemon && daemon->default_runtime && !daemon->runtimes.contains(*daemon->default_runtime) &&
      *daemon->default_runtime != "runc") {
    return make_finding(kId, Verdict::kFail,
                        fmt::format("{}: {} sets default-runtime \"{}\" but defines no such "
                                    "runtime (Docker fails with \"unknown or invalid runtime "
                                    "name\"); run sudo nvidia-ctk runtime configure "
                                    "--runtime=docker and restart Docker",
                                    head, daemon->path, *daemon->default_runtime));
  }
  std::vector<std::string> problems;
  if (starts_with(toolkit, "1.19.1") && cdi) {
    problems.push_back(
        "toolkit 1.19.1 with CDI froze hosts under heavy Docker work and broke "
        "CUDA init (nvidia-container-toolkit#1910, #1967): install 1.19.0-1 or "
        "use the legacy runtime with CDI off");
  }
  if (d.snap) {
    problems.push_back(
        "Docker is the snap, which reads its own configuration and not what the "
        "toolkit writes: install docker-ce and remove the snap");
  }
  // With CDI on, containers get GPUs by --device nvidia.com/gpu=all without the runtime.
  if (!toolkit.empty() && !cdi && (!daemon || !daemon->runtimes.contains("nvidia"))) {
    problems.push_back(
        "daemon.json defines no \"nvidia\" runtime, so --runtime=nvidia and "
        "compose files without one fail: run sudo nvidia-ctk runtime configure "
        "--runtime=docker");
  }
  if (p.kind == facts::PlatformKind::kDgxSpark && daemon &&
      daemon->default_runtime.value_or("") != "nvidia" && daemon->runtimes.contains("nvidia")) {
    problems.push_back(
        "default-runtime is not \"nvidia\" as a Spark sets it (nv-docker-options): "
        "containers get no GPU without --gpus all or --runtime=nvidia");
  }
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, head + ": " + problems.front(), problems);
  }
  std::string runtime = daemon ? "default runtime " + daemon->default_runtime.value_or("runc")
                               : "no daemon.json (" + d.daemon.why_not() + ")";
  return make_finding(kId, Verdict::kPass, head + "; " + runtime);
}

}  // namespace
}  // namespace sparkdoc::checks::f4

namespace sparkdoc::checks {

const CheckInfo& f4_container_runtime() {
  static constexpr CheckInfo kInfo{
      .id = "F4",
      .title = "Container toolkit, CDI and Docker",
      .reads =
          "installed packages (nvidia-container-toolkit, docker-ce, docker.io); "
          "/etc/docker/daemon.json; /snap/docker; /etc/cdi and /var/run/cdi",
      .symptom =
          "\"unresolvable CDI devices runtime.nvidia.com/gpu=all\", \"unknown or invalid "
          "runtime name: nvidia\", \"nvidia-container-cli: initialization error: load "
          "library failed: libnvidia-ml.so.1\"; or the host freezes during heavy Docker "
          "vLLM work",
      .cause =
          "Toolkit 1.19.1 with CDI (host freezes, CUDA init failures), Docker from the snap "
          "(it ignores the toolkit's configuration), or a daemon.json without the nvidia "
          "runtime. A Spark sets default-runtime nvidia, so compose files without runtime: "
          "work only there.",
      .how_checked =
          "Reads the toolkit's and Docker's package versions, daemon.json "
          "(default-runtime, runtimes, features.cdi), the snap and the CDI specs.",
      .fix =
          "Toolkit 1.19.0-1 or the legacy runtime with CDI off; docker-ce instead of the "
          "snap; sudo nvidia-ctk runtime configure --runtime=docker and restart Docker (back "
          "up daemon.json first). Known good: Docker CE 29.2.1 + toolkit 1.19.0-1.",
      .source =
          "field 2026 §4: NVIDIA/nvidia-container-toolkit#1910 (2026-07-07), #1967; forum "
          "358538 [2nd]",
      .keywords =
          "docker container toolkit cdi snap daemon.json runtime nvidia-ctk "
          "default-runtime unresolvable cdi devices unknown or invalid runtime name "
          "nvidia-container-cli libnvidia-ml freeze 1.19.1",
      .run = &f4::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
