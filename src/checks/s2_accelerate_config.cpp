// S2 accelerate default config (001). Even with no rank variables, accelerate turns on FSDP or
// DeepSpeed by itself when ~/.cache/huggingface/accelerate/default_config.yaml says so.
//   WARN  the config's distributed_type is not NO (FSDP, DEEPSPEED, MULTI_GPU, ...) or it holds
//         an fsdp/deepspeed section, and ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED are not
//         both "0"/"false" (001 sets both to 0 to override the file).
//   INFO  the same on a multi-node run, where a distributed config is the point.
//   PASS  no cached config, distributed_type NO, or both overrides set.
//   SKIP  the config exists but could not be read.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/environment.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s2 {
namespace {

bool is_off(std::string_view value) {
  std::string v = to_lower(trim(value));
  return v == "0" || v == "false";
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform&) {
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

}  // namespace
}  // namespace sparkdoc::checks::s2

namespace sparkdoc::checks {

const CheckInfo& s2_accelerate_config() {
  static constexpr CheckInfo kInfo{
      .id = "S2",
      .title = "accelerate's cached default config",
      .reads =
          "~/.cache/huggingface/accelerate/default_config.yaml (distributed_type, fsdp/deepspeed "
          "sections); ACCELERATE_USE_FSDP, ACCELERATE_USE_DEEPSPEED",
      .symptom =
          "accelerate or the Trainer starts FSDP or DeepSpeed on one GPU, or fails "
          "distributed-mode checks, with no distributed variables set",
      .cause =
          "accelerate reads the default config an earlier `accelerate config` cached and applies "
          "its distributed_type by itself.",
      .how_checked =
          "Reads the cached config; warns when it asks for a distributed mode and the "
          "ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED overrides are not both 0.",
      .fix =
          "export ACCELERATE_USE_FSDP=0 ACCELERATE_USE_DEEPSPEED=0 (sparkdoc run does), or "
          "delete the cached config.",
      .source = "001",
      .keywords =
          "accelerate config default_config.yaml fsdp deepspeed distributed_type multi_gpu "
          "cached trainer",
      .run = &s2::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
