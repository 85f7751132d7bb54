#include "pyenv/probe.h"

#include <exception>

#include "core/strings.h"
#include "pyenv/dist_info.h"
#include "core/paths.h"
#include "pyenv/torch.h"

namespace sparkdoc::pyenv {
namespace {

PythonEnv read_environment(const DiscoveryOptions& options, EnvCandidate candidate) {
  const Root& root = options.root;
  PythonEnv env;
  env.source = std::move(candidate.source);
  env.prefix = std::move(candidate.prefix);
  env.interpreter = std::move(candidate.interpreter);
  env.python_version = std::move(candidate.python_version);
  env.site_packages = std::move(candidate.site_packages);
  for (const std::string& dir : env.site_packages) {
    auto found = scan_distributions(root, dir);
    if (!found) continue;
    for (Distribution& dist : *found) {
      if (env.packages.count(dist.name) != 0) {
        env.duplicates.push_back(std::move(dist));
      } else {
        std::string key = dist.name;
        env.packages.emplace(std::move(key), std::move(dist));
      }
    }
  }
  for (const std::string& dir : env.site_packages) {
    const std::string torch_dir = join_path(dir, "torch");
    if (exists(root.path(join_path(torch_dir, "__init__.py")))) {
      env.torch = read_torch(options, torch_dir);
      break;
    }
  }
  if (!env.torch.ok()) {
    env.torch = Reading<TorchInfo>::absent(
        Why::kAbsent, env.site_packages.empty()
                          ? std::string("no site-packages folder")
                          : "no torch package in " + join(env.site_packages, ", "));
  }
  return env;
}

}  // namespace

std::vector<PythonEnv> read_environments(const DiscoveryOptions& options) {
  std::vector<PythonEnv> out;
  for (EnvCandidate& candidate : find_environments(options)) {
    out.push_back(read_environment(options, std::move(candidate)));
  }
  return out;
}

Reading<std::vector<PythonEnv>> read_python(const DiscoveryOptions& options) {
  try {
    std::vector<PythonEnv> envs = read_environments(options);
    if (envs.empty()) {
      return Reading<std::vector<PythonEnv>>::absent(
          Why::kAbsent,
          "no Python environment found (no VIRTUAL_ENV, CONDA_PREFIX or python3 on PATH)");
    }
    return envs;
  } catch (const std::exception& e) {
    return Reading<std::vector<PythonEnv>>::absent(Why::kError, e.what());
  } catch (...) {
    return Reading<std::vector<PythonEnv>>::absent(Why::kError, "unexpected failure");
  }
}

}  // namespace sparkdoc::pyenv
