// Which modules a LoRA wraps and how many parameters it adds, exactly as PEFT's
// get_nb_trainable_parameters() counts them (or as Unsloth prints them), from the ModelView.
//
// PEFT rules (peft tuners_utils / lora layer, reference §2.3):
//   - a target name matches a module whose path equals it or ends with "." + it;
//   - "all-linear" takes every nn.Linear except the output head (get_output_embeddings(); none
//     where that returns None, as on BLIP);
//   - Linear(in, out) adds r·(in + out); Embedding(n, d) r·(n + d); ConvNd r·in·k + out·r;
//   - target_parameters on a 3-D expert parameter [E, d1, d2] adds r·E·(d1 + d2) and counts as
//     one wrapped module per parameter (nested ParamWrappers);
//   - a target that matches a module of another kind (router, norm, container) is an error;
//   - out_proj and conv1d of Mamba model types are refused by current PEFT (a warning here:
//     older PEFT and Unsloth accept them, which is how 000's 116 and 6,004 modules arise).
// PEFT on transformers 5 MoE models whose checkpoint layout changed (the qwen2_moe pattern:
// qwen3_moe, qwen3_next, deepseek_v2/v3/v32, glm4_moe, olmoe, afmoe, cohere2_moe, ...; the
// mixtral pattern: mixtral, minimax, minimax_m2; lora.cpp lists them as transformers 5.17 and
// peft 0.21 were measured) rewrites the config first (peft
// utils/transformers_weight_conversion.py, _convert_peft_config_moe): target names
// gate_proj/up_proj (w1/w3) become the target parameter gate_up_proj at rank 2r, down_proj (w2)
// becomes down_proj, and gate becomes gate.weight (the router's parameter, or the weight of an
// nn.Linear named gate); those names leave target_modules, so shared experts and dense MLPs named
// the same are no longer adapted. "all-linear" is first resolved to leaf names plus those four.
// Naming gate_proj without up_proj is an error there. Measured against peft 0.21 on the H200.
// Unsloth (framework kUnsloth): experts are added when gate/up/down are targeted
// (get_moe_target_parameters), and each expert counts as its own module (000 §11: 6,004).
// Unsloth 2026.5.2 on qwen3_5_moe with "gate_up_proj" named also adapts gate_up twice and leaves
// the shared expert out (reference §2.1: its printed 714,752,000 decomposes only that way).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "plan/model.h"

namespace sparkdoc::plan {

enum class Framework { kPeft, kUnsloth };
std::string_view framework_name(Framework f);

struct LoraRequest {
  uint64_t rank = 16;
  std::vector<std::string> targets;  // module names; empty with all_linear
  bool all_linear = false;
  bool experts = false;              // add the routed experts' 3-D parameters
  Framework framework = Framework::kPeft;
};

struct AdaptedModule {
  std::string name;
  ModuleKind kind = ModuleKind::kLinear;
  uint64_t rank = 0;       // this module's rank (PEFT doubles it for fused gate_up, see below)
  uint64_t params = 0;     // LoRA parameters added
  uint64_t wrappers = 1;   // modules counted (1; E for per-expert Unsloth; 2 when doubled)
  uint64_t in = 0, out = 0, experts = 0;
  int layer = -1;
  Tower tower = Tower::kText;
};

struct LoraCount {
  uint64_t rank = 0;
  uint64_t trainable = 0;
  uint64_t modules = 0;
  std::vector<AdaptedModule> adapted;          // sorted by name
  std::vector<std::string> target_modules;     // as PEFT's LoraConfig would get them
  std::vector<std::string> target_parameters;  // expert parameters (suffixes)
  std::vector<std::string> warnings;
  // Per target name: how many modules it matched (a name matching nothing is a warning).
  std::vector<std::pair<std::string, uint64_t>> matches;
};

// Errors: a target matching an unsupported module (PEFT raises), no module matched at all.
Result<LoraCount> count_lora(const ModelView& model, const LoraRequest& request);

// The default target list when none is given: attention and MLP projections.
std::vector<std::string> default_targets();

}  // namespace sparkdoc::plan
