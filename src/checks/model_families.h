// What the recipes established per model family, dated, for the rules that depend on the
// model: which transformers release supports it natively, the stack that was validated with it
// on a DGX Spark, and its memory limits there. Keyed by config.json's model_type and recognised
// from a Hub id or a local folder name.
//
//   nemotron_h   000 (2026-06): native NemotronHForCausalLM with the KV-cache fix from
//                transformers 5.5.3; NGC 26.04 with transformers 5.5.3, peft 0.14.0, trl 0.15.2,
//                accelerate 1.3.0; hybrid Mamba-2 + MoE; transformers 5.5.3 sets
//                supports_gradient_checkpointing = False (5.17 sets True).
//   qwen3_5_moe  001 (2026-08): Qwen3.5-35B-A3B, vision-language MoE (256 experts); transformers
//                5.2.0 with Unsloth 2026.3.4 or 5.3.0 with Unsloth 2026.3.17, PEFT 0.18.1, torch
//                2.11.0+cu130, Python 3.12; seq 2048 at batch 2 validated, 8192 OOMs in backward.
//   (other MoE)  recognised by their ids (-A3B, Mixtral, gpt-oss, ...) for the MoE rules only.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sparkdoc::checks {

struct Pin {
  std::string_view package;  // PEP 503
  std::string_view version;
};

struct ValidatedStack {
  std::string_view label;  // "Unsloth 2026.3.4"
  std::span<const Pin> pins;
};

struct ModelFamily {
  std::string_view model_type;  // "nemotron_h"; "" for a family known by its id only
  std::string_view name;        // "Nemotron-H (Nemotron 3 Nano, Super)"
  bool moe = false;
  bool mamba_hybrid = false;
  bool vision_language = false;
  std::string_view native_since;  // the first transformers release with native support
  std::span<const ValidatedStack> stacks;
  std::optional<int> seq_validated;  // the largest sequence length validated on a GB10
  std::optional<int> seq_oom;        // one that ran out of memory there
  std::string_view source;           // "000 §2", "001"
};

// The family of a Hub id ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), a folder name or a
// model_type ("qwen3_5_moe"); nullptr when none is known.
const ModelFamily* family_for_model(std::string_view id_or_type);

// The families with a model_type (Nemotron-H, Qwen3.5 MoE), for rules that go through every
// validated stack.
std::span<const ModelFamily* const> known_families();

}  // namespace sparkdoc::checks
