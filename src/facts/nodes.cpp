#include "facts/nodes.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"
#include "facts/command_line.h"
#include "facts/environment.h"

namespace sparkdoc::facts {

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

}  // namespace sparkdoc::facts
