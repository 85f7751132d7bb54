// S1-S4: environment rules from the two recipes (001 "Distributed Training Environment
// Cleanup" and "Runtime Environment Variables"; 000 §4). Each function opens with its rule.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checks/check_fns.h"
#include "checks/common.h"
#include "core/strings.h"
#include "facts/environment.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks {
namespace {

bool is_off(std::string_view value) {
  std::string v = to_lower(trim(value));
  return v == "0" || v == "false";
}

}  // namespace

// S1 distributed leftovers (001). A one-GPU Spark run must not inherit launch state: frameworks
// that see WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or an MPI launcher's rank
// variables (OMPI_COMM_WORLD_*, PMI_RANK, PMIX_RANK, MPI_LOCALRANKID...) start a multi-process
// initialisation that hangs or fails. 001 strips every NCCL_*, OMPI_*, MPI_* and PMI_* as well;
// most of those are tuning (OMPI_MCA_*, NCCL_SOCKET_IFNAME) that images set on purpose and that
// start nothing by themselves, so they are reported, not warned about.
//   WARN  launch-state variables set while the run is single-node (G10's node count): unset
//         them, or launch with `sparkdoc run`, which starts the command without them.
//   INFO  only tuning variables set; or a multi-node run, where all of them are expected.
//   PASS  none set.
// NCCL_VERSION is not a setting: CUDA and NGC images set it as a label, and NCCL ignores it.
Finding check_s1_distributed_env(const Snapshot& s, const Workload& w, const facts::Platform&) {
  constexpr std::string_view kId = "S1";
  std::vector<std::string> launch;
  std::vector<std::string> tuning;
  std::vector<std::string> details;
  for (const auto& entry : s.env) {
    const std::string& name = entry.first;
    if (facts::is_launch_state(name)) {
      launch.push_back(name);
    } else if (facts::is_distributed_tuning(name)) {
      tuning.push_back(name);
    } else {
      continue;
    }
    details.push_back(fmt::format("{}={}", name, entry.second));
  }
  if (launch.empty() && tuning.empty()) {
    return make_finding(kId, Verdict::kPass,
                        "no distributed-launch variables (WORLD_SIZE, RANK, MASTER_*, NCCL_*, "
                        "OMPI_*, MPI_*, PMI_*) set");
  }
  std::vector<std::string> all = launch;
  all.insert(all.end(), tuning.begin(), tuning.end());
  facts::NodeCount nodes = facts::count_nodes(s, w);
  if (nodes.nodes > 1) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{}-node run ({}): distributed variables are expected: {}",
                                    nodes.nodes, join(nodes.evidence, ", "), join(all, ", ")),
                        details);
  }
  if (launch.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("no launch state set; tuning variables {} start nothing by "
                                    "themselves (`sparkdoc run` strips them, as 001 does)",
                                    join(tuning, ", ")),
                        details);
  }
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{} set on a single-node run: frameworks will try a "
                                  "multi-process start; unset {} or launch with `sparkdoc run`, "
                                  "which cleans them",
                                  join(all, ", "), all.size() == 1 ? "it" : "them"),
                      details);
}

// S2 accelerate default config (001). Even with no rank variables, accelerate turns on FSDP or
// DeepSpeed by itself when ~/.cache/huggingface/accelerate/default_config.yaml says so.
//   WARN  the config's distributed_type is not NO (FSDP, DEEPSPEED, MULTI_GPU, ...) or it holds
//         an fsdp/deepspeed section, and ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED are not
//         both "0"/"false" (001 sets both to 0 to override the file).
//   INFO  the same on a multi-node run, where a distributed config is the point.
//   PASS  no cached config, distributed_type NO, or both overrides set.
//   SKIP  the config exists but could not be read.
Finding check_s2_accelerate_config(const Snapshot& s, const Workload& w, const facts::Platform&) {
  constexpr std::string_view kId = "S2";
  const auto& r = s.accelerate_config;
  if (!r.ok()) {
    if (r.missing().why == Why::kAbsent) {
      return make_finding(kId, Verdict::kPass, "no cached accelerate config");
    }
    return make_finding(kId, Verdict::kSkip, "accelerate config not read: " + r.reason());
  }
  const sys::AccelerateConfig& c = *r;
  std::string type = c.distributed_type.empty() ? "unset" : c.distributed_type;
  bool distributed = (!c.distributed_type.empty() && to_lower(c.distributed_type) != "no") ||
                     c.has_fsdp_config || c.has_deepspeed_config;
  std::vector<std::string> sections;
  if (c.has_fsdp_config) sections.push_back("an fsdp_config section");
  if (c.has_deepspeed_config) sections.push_back("a deepspeed_config section");
  std::string what = fmt::format("{} sets distributed_type {}", c.path, type);
  if (!sections.empty()) what += " with " + join(sections, " and ");
  if (!distributed) return make_finding(kId, Verdict::kPass, what);

  const std::string* use_fsdp = facts::env_value(s, "ACCELERATE_USE_FSDP");
  const std::string* use_ds = facts::env_value(s, "ACCELERATE_USE_DEEPSPEED");
  if (use_fsdp && use_ds && is_off(*use_fsdp) && is_off(*use_ds)) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("{}, overridden by ACCELERATE_USE_FSDP={} and "
                                    "ACCELERATE_USE_DEEPSPEED={}",
                                    what, *use_fsdp, *use_ds));
  }
  facts::NodeCount nodes = facts::count_nodes(s, w);
  if (nodes.nodes > 1) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{}; expected for this {}-node run", what, nodes.nodes));
  }
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{}: accelerate will start a distributed run on one GPU; "
                                  "export ACCELERATE_USE_FSDP=0 ACCELERATE_USE_DEEPSPEED=0 "
                                  "(sparkdoc run does) or delete the file",
                                  what));
}

// S3 PYTORCH_CUDA_ALLOC_CONF (000 §4, 001). Near the unified-memory ceiling the caching
// allocator's fixed segments fragment and a large allocation fails with memory free in total;
// expandable_segments:True grows segments in place instead. 000 adds max_split_size_mb:512 so
// large cached blocks are not split into pieces. PYTORCH_ALLOC_CONF (torch 2.9+) is read too.
//   WARN  unset or without expandable_segments:True on unified memory.
//   INFO  the same on a discrete GPU or without one (fragmentation costs less there).
//   PASS  expandable_segments:True set (noting max_split_size_mb:512 when absent).
Finding check_s3_alloc_conf(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "S3";
  const std::string kRecommended =
      fmt::format("PYTORCH_CUDA_ALLOC_CONF={}", facts::kRecommendedAllocConf);
  std::string name = "PYTORCH_CUDA_ALLOC_CONF";
  const std::string* value = facts::env_value(s, name);
  if (!value) {
    name = "PYTORCH_ALLOC_CONF";
    value = facts::env_value(s, name);
  }
  bool expandable = false;
  bool max_split = false;
  if (value) {
    for (auto option : split(*value, ',')) {
      auto colon = option.find(':');
      if (colon == std::string_view::npos) continue;
      std::string key = to_lower(trim(option.substr(0, colon)));
      std::string val = to_lower(trim(option.substr(colon + 1)));
      if (key == "expandable_segments" && val == "true") expandable = true;
      if (key == "max_split_size_mb") max_split = true;
    }
  }
  if (expandable) {
    std::string note = max_split ? ""
                                 : " (000 also sets max_split_size_mb:512 so large cached "
                                   "blocks stay whole)";
    return make_finding(kId, Verdict::kPass, fmt::format("{}={}{}", name, *value, note));
  }
  std::string current = value ? fmt::format("{}={} lacks expandable_segments:True", name, *value)
                              : std::string("PYTORCH_CUDA_ALLOC_CONF is unset");
  if (p.unified_memory()) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: near the unified-memory ceiling the allocator fragments "
                                    "and large allocations fail; export {}",
                                    current, kRecommended));
  }
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("{}; on unified memory this matters, here it is optional ({})",
                                  current, kRecommended));
}

// S4 TOKENIZERS_PARALLELISM (001). The Rust tokenizers' thread pool does not survive fork():
// dataset.map(num_proc>1) and DataLoader workers deadlock after a tokenizer has run.
//   WARN  not set to "false" (the tokenizers library also accepts off/0/no/f/n as off).
//   PASS  set off.
Finding check_s4_tokenizers_parallelism(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S4";
  const std::string* value = facts::env_value(s, "TOKENIZERS_PARALLELISM");
  if (value) {
    std::string v = to_lower(trim(*value));
    if (v == "false" || v == "0" || v == "off" || v == "no" || v == "f" || v == "n") {
      return make_finding(kId, Verdict::kPass, "TOKENIZERS_PARALLELISM=" + *value);
    }
  }
  std::string current =
      value ? "TOKENIZERS_PARALLELISM=" + *value : std::string("TOKENIZERS_PARALLELISM is unset");
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{}: tokenizers threads deadlock forked workers "
                                  "(dataset.map with num_proc > 1); export "
                                  "TOKENIZERS_PARALLELISM=false",
                                  current));
}

}  // namespace sparkdoc::checks
