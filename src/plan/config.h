// The parts of a model's config.json that planning needs. Multimodal configs nest the language
// model under text_config (Qwen3.5, Qwen2.5-VL, Gemma 3); the text fields are read from there
// when present, else from the top level.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sparkdoc::plan {

struct ModelConfig {
  std::string model_type;       // top level ("qwen3_5_moe", "nemotron_h", "llama")
  std::string text_model_type;  // text_config.model_type, else model_type
  std::vector<std::string> architectures;
  bool has_vision_config = false;
  bool remote_code = false;     // auto_map present (the checkpoint ships its own modelling code)
  uint64_t hidden_size = 0;
  uint64_t num_layers = 0;
  uint64_t num_attention_heads = 0;
  uint64_t num_key_value_heads = 0;
  uint64_t head_dim = 0;
  uint64_t intermediate_size = 0;
  uint64_t vocab_size = 0;
  uint64_t num_experts = 0;           // num_experts / n_routed_experts / num_local_experts
  uint64_t experts_per_token = 0;     // num_experts_per_tok
  std::optional<bool> tie_word_embeddings;  // as written; absent means the class default
  std::string dtype;                  // "bfloat16" from dtype / torch_dtype, "" when absent
  std::string quant_method;           // quantization_config.quant_method, "" when none
  // Decoder layers that run a shared transformer block (Zamba's layers_block_type "hybrid",
  // Zamba 2's hybrid_layer_ids), ascending; empty for other models.
  std::vector<uint64_t> hybrid_layers;
  bool operator==(const ModelConfig&) const = default;
};

Result<ModelConfig> parse_config(std::string_view text, std::string_view label = "config.json");
Result<ModelConfig> read_config(const std::string& path);

// Model types whose LoRA targets PEFT checks against Mamba's fused kernels (out_proj and conv1d
// are refused: peft tuners_utils `_check_lora_target_modules_mamba`; nemotron_h seen refused by
// peft 0.21, reference §2.2).
bool is_mamba_model_type(std::string_view model_type);

}  // namespace sparkdoc::plan
