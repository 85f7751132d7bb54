// Header-only checkpoints of real architectures at full size, written at test time from the
// configs in the reference (memory-planning.md §1) with each checkpoint's tensor names and
// shapes. No data: the files hold only their headers.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "safetensors_writer.h"

namespace sparkdoc::testing {

struct ModelFixture {
  std::string config;                  // config.json text
  std::vector<WriteTensor> tensors;
};

inline std::string L(const std::string& prefix, int i) {
  return prefix + std::to_string(i) + ".";
}

// Writes config.json and the tensors in `shards` shards with an index: header-only, or with
// their data (`mode`).
inline std::filesystem::path write_fixture(const std::filesystem::path& dir, const ModelFixture& m,
                                           size_t shards = 3,
                                           DataMode mode = DataMode::kHeaderOnly) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << m.config;
  std::vector<std::pair<std::string, std::vector<WriteTensor>>> parts;
  size_t per = (m.tensors.size() + shards - 1) / shards;
  uint64_t total = 0;
  for (size_t s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, shards);
    std::vector<WriteTensor> ts;
    for (size_t i = s * per; i < std::min(m.tensors.size(), (s + 1) * per); ++i) {
      ts.push_back(m.tensors[i]);
    }
    write_safetensors(dir / name, ts, mode);
    total += header_json(ts).second;
    parts.emplace_back(name, std::move(ts));
  }
  write_index(dir / "model.safetensors.index.json", parts, total);
  return dir;
}

// Qwen3.5-35B-A3B (Qwen3_5MoeForConditionalGeneration): 40 layers (3 Gated DeltaNet + 1 full
// attention, repeated), 256 experts, vision tower, and an MTP head that transformers drops.
inline ModelFixture qwen35_moe(bool per_expert) {
  ModelFixture m;
  m.config = R"({"architectures":["Qwen3_5MoeForConditionalGeneration"],"model_type":"qwen3_5_moe",
    "tie_word_embeddings":false,
    "text_config":{"model_type":"qwen3_5_moe_text","hidden_size":2048,"num_hidden_layers":40,
      "num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"num_experts":256,
      "num_experts_per_tok":8,"moe_intermediate_size":512,"shared_expert_intermediate_size":512,
      "vocab_size":248320,"tie_word_embeddings":false,"dtype":"bfloat16"},
    "vision_config":{"depth":27,"hidden_size":1152}})";
  auto& t = m.tensors;
  const std::string lm = "model.language_model.";
  t.push_back({lm + "embed_tokens.weight", "BF16", {248320, 2048}});
  for (int i = 0; i < 40; ++i) {
    std::string p = L(lm + "layers.", i);
    if (i % 4 == 3) {
      t.push_back({p + "self_attn.q_proj.weight", "BF16", {8192, 2048}});
      t.push_back({p + "self_attn.k_proj.weight", "BF16", {512, 2048}});
      t.push_back({p + "self_attn.v_proj.weight", "BF16", {512, 2048}});
      t.push_back({p + "self_attn.o_proj.weight", "BF16", {2048, 4096}});
      t.push_back({p + "self_attn.q_norm.weight", "BF16", {256}});
      t.push_back({p + "self_attn.k_norm.weight", "BF16", {256}});
    } else {
      t.push_back({p + "linear_attn.in_proj_qkv.weight", "BF16", {8192, 2048}});
      t.push_back({p + "linear_attn.in_proj_z.weight", "BF16", {4096, 2048}});
      t.push_back({p + "linear_attn.in_proj_b.weight", "BF16", {32, 2048}});
      t.push_back({p + "linear_attn.in_proj_a.weight", "BF16", {32, 2048}});
      t.push_back({p + "linear_attn.conv1d.weight", "BF16", {8192, 1, 4}});
      t.push_back({p + "linear_attn.dt_bias", "BF16", {32}});
      t.push_back({p + "linear_attn.A_log", "F32", {32}});
      t.push_back({p + "linear_attn.norm.weight", "F32", {128}});
      t.push_back({p + "linear_attn.out_proj.weight", "BF16", {2048, 4096}});
    }
    t.push_back({p + "mlp.gate.weight", "BF16", {256, 2048}});
    if (per_expert) {
      for (int e = 0; e < 256; ++e) {
        std::string x = L(p + "mlp.experts.", e);
        t.push_back({x + "gate_proj.weight", "BF16", {512, 2048}});
        t.push_back({x + "up_proj.weight", "BF16", {512, 2048}});
        t.push_back({x + "down_proj.weight", "BF16", {2048, 512}});
      }
    } else {
      t.push_back({p + "mlp.experts.gate_up_proj", "BF16", {256, 1024, 2048}});
      t.push_back({p + "mlp.experts.down_proj", "BF16", {256, 2048, 512}});
    }
    t.push_back({p + "mlp.shared_expert.gate_proj.weight", "BF16", {512, 2048}});
    t.push_back({p + "mlp.shared_expert.up_proj.weight", "BF16", {512, 2048}});
    t.push_back({p + "mlp.shared_expert.down_proj.weight", "BF16", {2048, 512}});
    t.push_back({p + "mlp.shared_expert_gate.weight", "BF16", {1, 2048}});
    t.push_back({p + "input_layernorm.weight", "BF16", {2048}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {2048}});
  }
  t.push_back({lm + "norm.weight", "BF16", {2048}});
  t.push_back({"lm_head.weight", "BF16", {248320, 2048}});
  const std::string v = "model.visual.";
  t.push_back({v + "patch_embed.proj.weight", "BF16", {1152, 3, 2, 16, 16}});
  t.push_back({v + "patch_embed.proj.bias", "BF16", {1152}});
  t.push_back({v + "pos_embed.weight", "BF16", {2304, 1152}});
  for (int i = 0; i < 27; ++i) {
    std::string b = L(v + "blocks.", i);
    for (const char* n : {"norm1", "norm2"}) {
      t.push_back({b + n + ".weight", "BF16", {1152}});
      t.push_back({b + n + ".bias", "BF16", {1152}});
    }
    t.push_back({b + "attn.qkv.weight", "BF16", {3456, 1152}});
    t.push_back({b + "attn.qkv.bias", "BF16", {3456}});
    t.push_back({b + "attn.proj.weight", "BF16", {1152, 1152}});
    t.push_back({b + "attn.proj.bias", "BF16", {1152}});
    t.push_back({b + "mlp.linear_fc1.weight", "BF16", {4304, 1152}});
    t.push_back({b + "mlp.linear_fc1.bias", "BF16", {4304}});
    t.push_back({b + "mlp.linear_fc2.weight", "BF16", {1152, 4304}});
    t.push_back({b + "mlp.linear_fc2.bias", "BF16", {1152}});
  }
  t.push_back({v + "merger.norm.weight", "BF16", {1152}});
  t.push_back({v + "merger.norm.bias", "BF16", {1152}});
  t.push_back({v + "merger.linear_fc1.weight", "BF16", {4608, 4608}});
  t.push_back({v + "merger.linear_fc1.bias", "BF16", {4608}});
  t.push_back({v + "merger.linear_fc2.weight", "BF16", {2048, 4608}});
  t.push_back({v + "merger.linear_fc2.bias", "BF16", {2048}});
  // Part of the multi-token-prediction head the checkpoint ships.
  t.push_back({"mtp.fc.weight", "BF16", {2048, 4096}});
  t.push_back({"mtp.layers.0.self_attn.q_proj.weight", "BF16", {8192, 2048}});
  t.push_back({"mtp.norm.weight", "BF16", {2048}});
  return m;
}

// NVIDIA-Nemotron-3-Nano-30B-A3B: 23 Mamba-2, 23 MoE (128 experts, relu2 up/down) and 6
// attention layers. remote_code: the hub layout (backbone., one tensor per expert); otherwise
// transformers 5's (model., fused experts).
inline ModelFixture nemotron_h(bool remote_code) {
  ModelFixture m;
  m.config = R"({"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h",
    "auto_map":{"AutoModelForCausalLM":"modeling_nemotron_h.NemotronHForCausalLM"},
    "hidden_size":2688,"num_hidden_layers":52,"num_attention_heads":32,"num_key_value_heads":2,
    "head_dim":128,"n_routed_experts":128,"num_experts_per_tok":6,"moe_intermediate_size":1856,
    "moe_shared_expert_intermediate_size":3712,"vocab_size":131072,"tie_word_embeddings":false,
    "hybrid_override_pattern":"MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "torch_dtype":"bfloat16"})";
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  const std::string root = remote_code ? "backbone." : "model.";
  auto& t = m.tensors;
  t.push_back({root + "embeddings.weight", "BF16", {131072, 2688}});
  for (int i = 0; i < 52; ++i) {
    std::string p = L(root + "layers.", i);
    t.push_back({p + "norm.weight", "BF16", {2688}});
    std::string x = p + "mixer.";
    switch (pattern[static_cast<size_t>(i)]) {
      case 'M':
        t.push_back({x + "in_proj.weight", "BF16", {10304, 2688}});
        t.push_back({x + "conv1d.weight", "BF16", {6144, 1, 4}});
        t.push_back({x + "conv1d.bias", "BF16", {6144}});
        t.push_back({x + "dt_bias", "BF16", {64}});
        t.push_back({x + "A_log", "F32", {64}});
        t.push_back({x + "D", "F32", {64}});
        t.push_back({x + "norm.weight", "BF16", {4096}});
        t.push_back({x + "out_proj.weight", "BF16", {2688, 4096}});
        break;
      case 'E':
        t.push_back({x + "gate.weight", "BF16", {128, 2688}});
        t.push_back({x + "gate.e_score_correction_bias", "F32", {128}});
        if (remote_code) {
          for (int e = 0; e < 128; ++e) {
            std::string ex = L(x + "experts.", e);
            t.push_back({ex + "up_proj.weight", "BF16", {1856, 2688}});
            t.push_back({ex + "down_proj.weight", "BF16", {2688, 1856}});
          }
        } else {
          t.push_back({x + "experts.up_proj", "BF16", {128, 1856, 2688}});
          t.push_back({x + "experts.down_proj", "BF16", {128, 2688, 1856}});
        }
        t.push_back({x + "shared_experts.up_proj.weight", "BF16", {3712, 2688}});
        t.push_back({x + "shared_experts.down_proj.weight", "BF16", {2688, 3712}});
        break;
      default:
        t.push_back({x + "q_proj.weight", "BF16", {4096, 2688}});
        t.push_back({x + "k_proj.weight", "BF16", {256, 2688}});
        t.push_back({x + "v_proj.weight", "BF16", {256, 2688}});
        t.push_back({x + "o_proj.weight", "BF16", {2688, 4096}});
        break;
    }
  }
  t.push_back({root + "norm_f.weight", "BF16", {2688}});
  t.push_back({"lm_head.weight", "BF16", {131072, 2688}});
  return m;
}

// Qwen3-30B-A3B as the hub stores it: 48 layers, 128 experts one tensor each.
inline ModelFixture qwen3_moe() {
  ModelFixture m;
  m.config = R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe",
    "hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,
    "head_dim":128,"num_experts":128,"num_experts_per_tok":8,"moe_intermediate_size":768,
    "vocab_size":151936,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
  auto& t = m.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {151936, 2048}});
  for (int i = 0; i < 48; ++i) {
    std::string p = L("model.layers.", i);
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {4096, 2048}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {512, 2048}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {512, 2048}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {2048, 4096}});
    t.push_back({p + "self_attn.q_norm.weight", "BF16", {128}});
    t.push_back({p + "self_attn.k_norm.weight", "BF16", {128}});
    t.push_back({p + "mlp.gate.weight", "BF16", {128, 2048}});
    for (int e = 0; e < 128; ++e) {
      std::string x = L(p + "mlp.experts.", e);
      t.push_back({x + "gate_proj.weight", "BF16", {768, 2048}});
      t.push_back({x + "up_proj.weight", "BF16", {768, 2048}});
      t.push_back({x + "down_proj.weight", "BF16", {2048, 768}});
    }
    t.push_back({p + "input_layernorm.weight", "BF16", {2048}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {2048}});
  }
  t.push_back({"model.norm.weight", "BF16", {2048}});
  t.push_back({"lm_head.weight", "BF16", {151936, 2048}});
  return m;
}

// A small Llama-style model (tied embeddings, no lm_head in the checkpoint), for goldens.
inline ModelFixture tiny_llama() {
  ModelFixture m;
  m.config = R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":256,
    "num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":32,
    "intermediate_size":1024,"vocab_size":32000,"tie_word_embeddings":true,
    "torch_dtype":"bfloat16"})";
  auto& t = m.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {32000, 256}});
  for (int i = 0; i < 4; ++i) {
    std::string p = L("model.layers.", i);
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {64, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {64, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {1024, 256}});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {1024, 256}});
    t.push_back({p + "mlp.down_proj.weight", "BF16", {256, 1024}});
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
    t.push_back({p + "self_attn.rotary_emb.inv_freq", "F32", {16}});
  }
  t.push_back({"model.norm.weight", "BF16", {256}});
  return m;
}

}  // namespace sparkdoc::testing
