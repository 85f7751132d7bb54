#include "facts/python.h"

#include <fmt/format.h>

#include "core/names.h"

namespace sparkdoc::facts {

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
  // Why this environment was the one judged, as a person would say it.
  std::string why = env.source;
  if (env.source == "PATH") {
    why = "python3 on PATH";
  } else if (env.source == "VIRTUAL_ENV") {
    why = "activated: VIRTUAL_ENV";
  } else if (env.source == "CONDA_PREFIX") {
    why = "activated: CONDA_PREFIX";
  } else if (env.source == ".venv") {
    why = "the working directory's .venv, not activated";
  } else if (env.source == "pyenv") {
    why = "pyenv's version here";
  }
  return fmt::format("{} ({})", env.prefix, why);
}

std::optional<std::string> torch_version(const pyenv::PythonEnv& env) {
  if (env.torch.ok() && env.torch->version.ok()) return *env.torch->version;
  if (const auto* dist = find_dist(env, "torch")) return dist->version;
  return std::nullopt;
}

}  // namespace sparkdoc::facts
