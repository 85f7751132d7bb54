#include "checks/common.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/names.h"
#include "core/strings.h"
#include "core/units.h"

namespace sparkdoc::checks {

Finding make_finding(std::string_view id, Verdict verdict, std::string detail,
                     std::vector<std::string> details) {
  Finding f;
  f.id = std::string(id);
  f.verdict = verdict;
  f.detail = std::move(detail);
  f.details = std::move(details);
  return f;
}

const pyenv::Distribution* find_dist(const pyenv::PythonEnv& env, std::string_view name) {
  std::string wanted = pep503_name(name);
  if (auto it = env.packages.find(wanted); it != env.packages.end()) return &it->second;
  // The probe keys by normalised name; a snapshot written by hand may not.
  for (const auto& [key, dist] : env.packages) {
    if (pep503_name(key) == wanted || pep503_name(dist.name) == wanted) {
      return &dist;
    }
  }
  return nullptr;
}

const pyenv::PythonEnv* first_torch_env(const std::vector<pyenv::PythonEnv>& envs) {
  for (const auto& env : envs) {
    if (env.torch.ok()) return &env;
  }
  return nullptr;
}

const pyenv::PythonEnv* judged_env(const std::vector<pyenv::PythonEnv>& envs) {
  if (const auto* env = first_torch_env(envs)) return env;
  return envs.empty() ? nullptr : &envs.front();
}

std::string describe_env(const pyenv::PythonEnv& env) {
  if (env.source.empty()) return env.prefix;
  return fmt::format("{} ({})", env.prefix, env.source);
}

std::optional<std::string> torch_version(const pyenv::PythonEnv& env) {
  if (env.torch.ok() && env.torch->version.ok()) return *env.torch->version;
  if (const auto* dist = find_dist(env, "torch")) return dist->version;
  return std::nullopt;
}

const std::string* env_value(const Snapshot& snapshot, std::string_view name) {
  auto it = snapshot.env.find(std::string(name));
  return it == snapshot.env.end() ? nullptr : &it->second;
}

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
ContainerVerdict detect_container(const Snapshot& s) {
  ContainerVerdict v;
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

namespace {

std::optional<int64_t> positive_int(std::string_view text) {
  auto v = parse_i64(trim(text));
  if (!v || *v < 1) return std::nullopt;
  return v;
}

// torchrun's --nnodes takes "N" or an elastic range "MIN:MAX"; the range's top counts.
std::optional<int64_t> nnodes_value(std::string_view text) {
  if (auto colon = text.find(':'); colon != std::string_view::npos) text = text.substr(colon + 1);
  return positive_int(text);
}

std::string normalize_flag(std::string_view flag) {
  std::string out(flag);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace

NodeCount count_nodes(const Snapshot& s, const Workload& w) {
  NodeCount n;
  auto consider = [&](std::optional<int64_t> value, std::string evidence) {
    if (!value) return;
    n.evidence.push_back(std::move(evidence));
    n.nodes = std::max(n.nodes, *value);
  };
  for (std::string_view name : {"NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"}) {
    if (const std::string* v = env_value(s, name)) {
      consider(nnodes_value(*v), fmt::format("{}={}", name, *v));
    }
  }
  const std::string* world = env_value(s, "WORLD_SIZE");
  const std::string* local = env_value(s, "LOCAL_WORLD_SIZE");
  if (world && local) {
    auto ws = positive_int(*world);
    auto lws = positive_int(*local);
    if (ws && lws) {
      consider((*ws + *lws - 1) / *lws,
               fmt::format("WORLD_SIZE={} over LOCAL_WORLD_SIZE={}", *world, *local));
    }
  }
  if (s.accelerate_config.ok() && s.accelerate_config->num_machines) {
    consider(*s.accelerate_config->num_machines,
             fmt::format("accelerate num_machines: {}", *s.accelerate_config->num_machines));
  }
  if (w.command) {
    if (auto v = option_value(*w.command, {"--nnodes"})) {
      consider(nnodes_value(*v), fmt::format("--nnodes {} in the command", *v));
    }
    if (auto v = option_value(*w.command, {"--num-machines"})) {
      consider(positive_int(*v), fmt::format("--num_machines {} in the command", *v));
    }
  }
  return n;
}

std::vector<std::string> command_words(std::string_view command) {
  std::vector<std::string> out;
  std::string word;
  for (char c : command) {
    bool sep = c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\'' || c == ',' ||
               c == '(' || c == ')' || c == ';';
    if (sep) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::optional<std::string> option_value(std::string_view command,
                                        const std::vector<std::string_view>& flags) {
  auto words = command_words(command);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    auto eq = word.find('=');
    std::string name = normalize_flag(word.substr(0, eq));
    for (std::string_view flag : flags) {
      if (name != normalize_flag(flag)) continue;
      if (eq != std::string_view::npos) return std::string(word.substr(eq + 1));
      if (i + 1 < words.size()) return words[i + 1];
    }
  }
  return std::nullopt;
}

std::optional<std::string> process_name(const Snapshot& s, uint32_t pid) {
  if (!s.processes.ok()) return std::nullopt;
  for (const auto& h : s.processes->gpu_holders) {
    if (h.pid >= 0 && static_cast<uint32_t>(h.pid) == pid && !h.comm.empty()) return h.comm;
  }
  for (const auto& k : s.processes->servers) {
    if (k.pid >= 0 && static_cast<uint32_t>(k.pid) == pid) return k.kind;
  }
  return std::nullopt;
}

std::vector<GpuProcessUse> gpu_processes(const Snapshot& s) {
  std::vector<GpuProcessUse> out;
  if (!s.gpu.nvml.ok()) return out;
  for (const auto& d : s.gpu.nvml->devices) {
    if (!d.processes.ok()) continue;
    for (const auto& p : *d.processes) {
      GpuProcessUse u;
      u.pid = p.pid;
      u.device = d.index;
      u.name = process_name(s, p.pid).value_or("");
      if (p.used_bytes.ok()) u.used_bytes = *p.used_bytes;
      out.push_back(std::move(u));
    }
  }
  return out;
}

std::string describe_process(const GpuProcessUse& p) {
  std::string out = fmt::format("pid {}", p.pid);
  if (!p.name.empty()) out += fmt::format(" ({})", p.name);
  out += p.used_bytes ? " " + format_gb(*p.used_bytes) : " (memory not reported)";
  return out;
}

std::string format_duration_ns(uint64_t ns) {
  double s = static_cast<double>(ns) / 1e9;
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.1f} min", s / 60);
  if (s >= 1) return fmt::format("{:.1f} s", s);
  return fmt::format("{:.1f} ms", s * 1000);
}

std::string format_watts(uint64_t mw) {
  return fmt::format("{:.1f} W", static_cast<double>(mw) / 1000.0);
}

const audit::NativeAudit* native_audit(const Snapshot& s, const Platform& p, std::string* why) {
  auto say = [&](std::string text) -> const audit::NativeAudit* {
    if (why != nullptr) *why = std::move(text);
    return nullptr;
  };
  if (!s.native_code.ok()) {
    const std::string& detail = s.native_code.missing().detail;
    return say(detail == "not read" || detail.empty()
                   ? "no native-code audit in this snapshot (sparkdoc audit runs one)"
                   : "no native-code audit: " + detail);
  }
  const audit::NativeAudit& a = *s.native_code;
  std::string platform_cc = p.compute_capability ? fmt::format("{}.{}", p.compute_capability->major,
                                                               p.compute_capability->minor)
                                                 : "";
  if (a.target != platform_cc) {
    return say(fmt::format("the native-code audit was judged for {} but the GPU is {}",
                           a.target.empty() ? "no GPU" : a.target,
                           platform_cc.empty() ? "not read" : platform_cc));
  }
  return &a;
}

const audit::PackageAudit* audited_package(const audit::NativeAudit& a, std::string_view name) {
  const std::string key = pep503_name(name);
  for (const audit::PackageAudit& p : a.packages) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::vector<std::string> audit_notes(const audit::NativeAudit& a, std::string_view topic,
                                     std::string_view severity,
                                     const std::vector<std::string_view>& except) {
  std::vector<std::string> out;
  for (const audit::PackageAudit& p : a.packages) {
    if (std::find(except.begin(), except.end(), p.key) != except.end()) continue;
    for (const audit::Note& n : p.notes) {
      if (n.topic != topic || n.severity != severity) continue;
      out.push_back(fmt::format("{}{}: {}", p.name, p.version.empty() ? "" : " " + p.version,
                                n.text));
    }
  }
  return out;
}

}  // namespace sparkdoc::checks
