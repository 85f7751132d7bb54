#include "plan/lora.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>

#include "core/strings.h"
#include "plan/names.h"

namespace sparkdoc::plan {
namespace {

bool name_matches(std::string_view path, std::string_view target) {
  if (path == target) return true;
  return path.size() > target.size() && ends_with(path, target) &&
         path[path.size() - target.size() - 1] == '.';
}

// Whether `target` names a container module on the way to `param_path` (PEFT cannot wrap
// those): any module path above the parameter that matches by PEFT's suffix rule. A raw
// parameter's own module counts too (the fused experts' module, a Mamba mixer); a weight's own
// module is judged by its kind instead.
bool names_a_container(std::string_view param_path, std::string_view target) {
  auto dot = param_path.rfind('.');
  if (dot == std::string_view::npos) return false;
  bool owned = ends_with(param_path, ".weight") || ends_with(param_path, ".bias");
  std::string_view module = param_path.substr(0, dot);
  if (owned) {
    dot = module.rfind('.');
    if (dot == std::string_view::npos) return false;
    module = module.substr(0, dot);
  }
  while (true) {
    if (name_matches(module, target)) return true;
    dot = module.rfind('.');
    if (dot == std::string_view::npos) return false;
    module = module.substr(0, dot);
  }
}

uint64_t lora_params(const Module& m, uint64_t r) {
  switch (m.kind) {
    case ModuleKind::kLinear: return r * (m.in + m.out);
    case ModuleKind::kRouter: return r * (m.in + m.out);
    case ModuleKind::kEmbedding: return r * (m.in + m.out);
    case ModuleKind::kConv: return r * m.in * m.kernel_elems + m.out * r;
    case ModuleKind::kExperts: return r * m.experts * (m.in + m.out);
    default: return 0;
  }
}

bool is_mlp_projection(std::string_view target) {
  return target == "gate_proj" || target == "up_proj" || target == "down_proj" ||
         target == "gate_up_proj" || target == "w1" || target == "w2" || target == "w3";
}

using detail::leaf_of;

AdaptedModule adapt(const Module& m, uint64_t r) {
  AdaptedModule a;
  a.name = m.name;
  a.kind = m.kind;
  a.rank = r;
  a.params = lora_params(m, r);
  a.in = m.in;
  a.out = m.out;
  a.experts = m.experts;
  a.layer = m.layer;
  a.tower = m.tower;
  return a;
}

bool is_shared_expert(std::string_view path) {
  return path.find("shared_expert") != std::string_view::npos;
}

// PEFT's rewrite of targets for transformers 5 MoE families (see lora.h).
struct MoeConversion {
  std::vector<std::pair<std::string_view, std::string_view>> mapping;  // old name -> parameter
  std::vector<std::string_view> fused;  // old names fused into gate_up_proj
};

// The model types PEFT 0.21 rewrites on transformers 5.17, as the sweep measured them (a
// target_modules list with gate_proj/up_proj/down_proj adapts the fused experts, "gate" the
// router's weight). qwen2_moe and qwen3_vl_moe are not rewritten there: their gate_proj targets
// stay on the shared expert and dense MLPs. dots1 and hunyuan_v1_moe are in transformers' Qwen2
// MoE conversion pattern but did not build at their default config (not measured).
std::optional<MoeConversion> peft_moe_conversion(std::string_view model_type) {
  static constexpr std::string_view kQwen2Moe[] = {
      "afmoe",        "cohere2_moe",    "deepseek_v2",
      "deepseek_v3",  "deepseek_v32",   "dots1",
      "ernie4_5_moe", "exaone_moe",     "flex_olmo",
      "glm4_moe",     "glm4_moe_lite",  "glm4v_moe",
      "glm_moe_dsa",  "hunyuan_v1_moe", "longcat_flash",
      "mellum",       "olmoe",          "qwen3_moe",
      "qwen3_next",   "qwen3_omni_moe", "qwen3_omni_moe_thinker",
      "solar_open"};
  static constexpr std::string_view kMixtral[] = {"mixtral", "minimax", "minimax_m2"};
  for (auto t : kMixtral) {
    if (t == model_type) {
      return MoeConversion{{{"gate", "gate.weight"}, {"w1", "gate_up_proj"},
                            {"w3", "gate_up_proj"}, {"w2", "down_proj"}},
                           {"w1", "w3"}};
    }
  }
  for (auto t : kQwen2Moe) {
    if (t == model_type) {
      return MoeConversion{{{"gate", "gate.weight"}, {"gate_proj", "gate_up_proj"},
                            {"up_proj", "gate_up_proj"}, {"down_proj", "down_proj"}},
                           {"gate_proj", "up_proj"}};
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view framework_name(Framework f) {
  return f == Framework::kPeft ? "peft" : "unsloth";
}

std::vector<std::string> default_targets() {
  return {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
}

Result<LoraCount> count_lora(const ModelView& model, const LoraRequest& req) {
  LoraCount out;
  const uint64_t r = req.rank;
  out.rank = r;
  if (r == 0) return fail("LoRA rank must be at least 1");
  const std::string& mtype = model.config.model_type;
  bool mamba = is_mamba_model_type(mtype) || is_mamba_model_type(model.config.text_model_type);
  bool unsloth = req.framework == Framework::kUnsloth;
  bool qwen35_quirk = false;
  // PEFT 0.21's get_peft_model asks the model for its input embeddings, which transformers
  // 5.17's PPFormulaNetModel does not provide (measured: every LoRA on it raises).
  if (!unsloth && (mtype == "pp_formulanet" || model.config.text_model_type == "pp_formulanet")) {
    return fail(
        "PEFT 0.21 cannot wrap PPFormulaNet: get_peft_model calls get_input_embeddings(), which "
        "transformers 5.17's PPFormulaNetModel does not implement (NotImplementedError)");
  }

  std::vector<std::string> targets = req.targets;
  bool all_linear = req.all_linear;
  // Target parameters PEFT adds by itself (transformers 5 MoE conversion), with their rank.
  std::vector<std::pair<std::string, uint64_t>> converted_params;
  auto conversion = unsloth ? std::nullopt : peft_moe_conversion(mtype);
  if (conversion) {
    if (all_linear) {
      std::set<std::string> leaves;
      for (const auto& m : model.modules) {
        if (m.kind == ModuleKind::kLinear && m.name != model.output_embeddings) {
          leaves.insert(std::string(leaf_of(m.name)));
        }
      }
      for (const auto& [old_name, param] : conversion->mapping) leaves.insert(std::string(old_name));
      targets.assign(leaves.begin(), leaves.end());
      all_linear = false;
    } else if (targets.empty()) {
      targets = default_targets();
    }
    std::vector<std::string> kept;
    std::set<std::string_view> fused_seen;
    std::set<std::string_view> params;
    for (const auto& t : targets) {
      std::optional<std::pair<std::string_view, std::string_view>> hit;
      for (const auto& entry : conversion->mapping) {
        if (name_matches(t, entry.first)) {
          hit = entry;
          break;
        }
      }
      if (!hit) {
        kept.push_back(t);
        continue;
      }
      params.insert(hit->second);
      if (std::find(conversion->fused.begin(), conversion->fused.end(), hit->first) !=
          conversion->fused.end()) {
        fused_seen.insert(hit->first);
      }
    }
    if (!fused_seen.empty() && fused_seen.size() < conversion->fused.size()) {
      return fail(fmt::format("PEFT cannot target {} without {} on {}: transformers 5 fuses them "
                              "into gate_up_proj (\"Cannot convert PEFT target(s)\")",
                              *fused_seen.begin(),
                              fused_seen.count(conversion->fused[0]) ? conversion->fused[1]
                                                                     : conversion->fused[0],
                              mtype));
    }
    for (auto p : params) {
      uint64_t rank = (p == "gate_up_proj" && fused_seen.size() == conversion->fused.size())
                          ? r * conversion->fused.size()
                          : r;
      converted_params.emplace_back(std::string(p), rank);
    }
    if (!params.empty()) {
      out.warnings.push_back(fmt::format(
          "PEFT rewrites these targets for transformers 5's fused {} experts: {} become target "
          "parameters (gate_up_proj at rank {}); shared experts and dense MLPs of those names are "
          "no longer adapted",
          mtype, join(std::vector<std::string>(params.begin(), params.end()), ", "),
          fused_seen.size() == conversion->fused.size() ? 2 * r : r));
    }
    targets = kept;
  }
  if (!all_linear) {
    if (targets.empty() && !conversion) targets = default_targets();
    // PEFT raises for a target that names a module it cannot wrap.
    for (const auto& t : targets) {
      for (const auto& m : model.modules) {
        if (!name_matches(m.name, t)) continue;
        if (m.kind == ModuleKind::kRouter || m.kind == ModuleKind::kNorm) {
          return fail(fmt::format("target '{}' matches {} ({}), which PEFT cannot wrap "
                                  "(\"Target module ... is not supported\")",
                                  t, m.name, module_kind_name(m.kind)));
        }
      }
      for (const auto& p : model.parameter_paths) {
        if (names_a_container(p, t)) {
          std::string_view mod = p;
          return fail(fmt::format("target '{}' matches a container module on the way to {}, "
                                  "which PEFT cannot wrap (name a projection instead)",
                                  t, mod));
        }
      }
    }
    if (unsloth && (mtype == "qwen3_5_moe" || model.config.text_model_type == "qwen3_5_moe_text") &&
        std::find(targets.begin(), targets.end(), "gate_up_proj") != targets.end()) {
      qwen35_quirk = true;
      out.warnings.push_back(
          "Unsloth 2026.5.2 on Qwen3.5-MoE with gate_up_proj named adapts the fused gate_up "
          "experts twice and leaves the shared expert out; counted that way (its printed "
          "714,752,000 at r=8 decomposes only so)");
    }
  }

  std::map<std::string, uint64_t> matches;
  for (const auto& t : targets) matches[t] = 0;
  // Parameters already adapted (by a converted target), so --experts does not wrap them twice.
  std::set<std::string> adapted_params;
  for (const auto& [suffix, rank] : converted_params) {
    for (const auto& m : model.modules) {
      // "gate.weight" names the router's raw parameter, or the weight of an nn.Linear named
      // gate (AFMoE's router.gate), which PEFT then wraps as a parameter.
      bool router_weight = (m.kind == ModuleKind::kRouter || m.kind == ModuleKind::kLinear) &&
                           suffix == "gate.weight" && name_matches(m.name + ".weight", suffix);
      bool expert = m.kind == ModuleKind::kExperts && name_matches(m.name, suffix);
      if (!router_weight && !expert) continue;
      out.adapted.push_back(adapt(m, rank));
      adapted_params.insert(m.name);
    }
  }
  bool warned_mamba = false;

  for (const auto& m : model.modules) {
    if (m.kind == ModuleKind::kExperts || adapted_params.count(m.name)) continue;
    bool take = false;
    if (all_linear) {
      take = m.kind == ModuleKind::kLinear && m.name != model.output_embeddings;
    } else {
      for (const auto& t : targets) {
        if (name_matches(m.name, t)) {
          take = true;
          ++matches[t];
        }
      }
    }
    if (!take) continue;
    if (qwen35_quirk && is_shared_expert(m.name)) continue;
    if (mamba && (leaf_of(m.name) == "out_proj" || leaf_of(m.name) == "conv1d")) {
      if (!warned_mamba) {
        out.warnings.push_back(fmt::format(
            "{} is a Mamba model type: current PEFT (0.18+, 0.21 checked) refuses LoRA on "
            "out_proj and conv1d (get_peft_model raises ValueError); counted as older PEFT and "
            "Unsloth apply them",
            mtype));
        warned_mamba = true;
      }
    }
    if (m.kind == ModuleKind::kConv && m.in == 1 && m.out > 1) {
      return fail(fmt::format("{} is a grouped (depthwise) convolution; sparkdoc does not count "
                              "LoRA on it",
                              m.name));
    }
    out.adapted.push_back(adapt(m, r));
  }

  // Routed experts: explicitly (--experts), or by Unsloth when MLP projections are targeted.
  bool mlp_targeted = all_linear;
  for (const auto& t : targets) mlp_targeted = mlp_targeted || is_mlp_projection(t);
  bool experts = req.experts || (unsloth && mlp_targeted);
  std::set<std::string> param_suffixes;
  if (experts) {
    for (const auto& m : model.modules) {
      if (m.kind != ModuleKind::kExperts) continue;
      if (ends_with(m.name, "_bias") || adapted_params.count(m.name)) continue;
      AdaptedModule a = adapt(m, r);
      a.wrappers = unsloth ? m.experts : 1;
      if (qwen35_quirk && ends_with(m.name, "gate_up_proj")) {
        a.params *= 2;
        a.wrappers *= 2;
      }
      // target_parameters as a user writes them: "mlp.experts.gate_up_proj".
      std::string_view path = m.name;
      size_t at = path.rfind(".experts.");
      std::string_view tail = path.substr(at + 1);
      std::string_view before = path.substr(0, at);
      std::string_view parent = leaf_of(before);
      param_suffixes.insert(fmt::format("{}.{}", parent, tail));
      out.adapted.push_back(std::move(a));
    }
    if (param_suffixes.empty() && adapted_params.empty() && req.experts) {
      out.warnings.push_back("--experts: the model has no routed experts");
    }
  }

  std::sort(out.adapted.begin(), out.adapted.end(),
            [](const AdaptedModule& a, const AdaptedModule& b) { return a.name < b.name; });
  for (const auto& a : out.adapted) {
    out.trainable += a.params;
    out.modules += a.wrappers;
  }
  for (const auto& [suffix, rank] : converted_params) param_suffixes.insert(suffix);
  if (all_linear) {
    out.target_modules = {"all-linear"};
  } else {
    out.target_modules = targets;
    for (const auto& [t, n] : matches) {
      out.matches.emplace_back(t, n);
      if (n == 0) {
        out.warnings.push_back(fmt::format("target '{}' matches no module of this model", t));
      }
    }
  }
  out.target_parameters.assign(param_suffixes.begin(), param_suffixes.end());
  if (out.adapted.empty()) {
    return fail(fmt::format("no module of this model matches the targets ({}); PEFT raises "
                            "\"Target modules ... not found in the base model\"",
                            join(targets, ", ")));
  }
  return out;
}

}  // namespace sparkdoc::plan
