// The Python environments of a snapshot: which one the checks judge and what is in it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pyenv.h"

namespace sparkdoc::facts {

// Finds a distribution by any spelling of its name; nullptr when not installed (or not watched).
const pyenv::Distribution* find_dist(const pyenv::PythonEnv& env, std::string_view name);
// The first environment whose torch could be read; nullptr when none has torch.
const pyenv::PythonEnv* first_torch_env(const std::vector<pyenv::PythonEnv>& envs);
// The environment the package checks judge: the torch environment, else the first one.
const pyenv::PythonEnv* judged_env(const std::vector<pyenv::PythonEnv>& envs);
// The prefix and why it was found: "/opt/venv (activated: VIRTUAL_ENV)", "/usr (python3 on
// PATH)", "/srv/qwen/.venv (the working directory's .venv, not activated)".
std::string describe_env(const pyenv::PythonEnv& env);
// torch's version: torch/version.py first, the dist-info record second; nullopt if neither.
std::optional<std::string> torch_version(const pyenv::PythonEnv& env);

}  // namespace sparkdoc::facts
