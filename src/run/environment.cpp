#include "run/environment.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "facts/environment.h"

namespace sparkdoc::run {

EnvPlan plan_environment(char** envp, bool distributed) {
  EnvPlan plan;
  std::map<std::string, std::string> forced;
  if (!distributed) {
    for (std::string_view name : facts::kAccelerateOverrides) forced.emplace(name, "0");
  }
  std::map<std::string, std::string> defaults{
      {"PYTORCH_CUDA_ALLOC_CONF", std::string(facts::kRecommendedAllocConf)},
      {"TOKENIZERS_PARALLELISM", std::string(facts::kTokenizersParallelismOff)}};

  std::set<std::string> seen;
  std::set<std::string> removed;
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string name(entry.substr(0, eq));
    if (!seen.insert(name).second) continue;
    if (!distributed && facts::is_distributed_variable(name)) {
      removed.insert(name);
      continue;
    }
    if (auto f = forced.find(name); f != forced.end()) {
      plan.entries.push_back(name + "=" + f->second);
      plan.set.emplace(name, f->second);
      continue;
    }
    plan.entries.emplace_back(entry);
  }
  for (const auto& [name, value] : forced) {
    if (seen.count(name) == 0) {
      plan.entries.push_back(name + "=" + value);
      plan.set.emplace(name, value);
    }
  }
  // torch 2.9 reads PYTORCH_ALLOC_CONF as the newer spelling of the same setting: a user who
  // set either keeps it.
  bool alloc_set =
      seen.count("PYTORCH_CUDA_ALLOC_CONF") > 0 || seen.count("PYTORCH_ALLOC_CONF") > 0;
  for (const auto& [name, value] : defaults) {
    bool user_set = name == "PYTORCH_CUDA_ALLOC_CONF" ? alloc_set : seen.count(name) > 0;
    if (user_set) {
      plan.kept.push_back(name);
      continue;
    }
    plan.entries.push_back(name + "=" + value);
    plan.set.emplace(name, value);
  }
  plan.removed.assign(removed.begin(), removed.end());
  return plan;
}

}  // namespace sparkdoc::run
