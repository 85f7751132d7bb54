#include "plan/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace sparkdoc::plan {
namespace {

using nlohmann::json;

uint64_t get_u64(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number_unsigned()) return it->get<uint64_t>();
    if (it != j.end() && it->is_number_integer() && it->get<int64_t>() >= 0) {
      return static_cast<uint64_t>(it->get<int64_t>());
    }
  }
  return 0;
}

std::string get_str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

bool is_mamba_model_type(std::string_view t) {
  return t == "mamba" || t == "mamba2" || t == "falcon_mamba" || t == "falcon_h1" ||
         t == "nemotron_h";
}

Result<ModelConfig> parse_config(std::string_view text, std::string_view label) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return fail(fmt::format("{}: not valid JSON", label));
  if (!j.is_object()) return fail(fmt::format("{}: not a JSON object", label));
  ModelConfig c;
  c.model_type = get_str(j, "model_type");
  if (auto it = j.find("architectures"); it != j.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (a.is_string()) c.architectures.push_back(a.get<std::string>());
    }
  }
  c.remote_code = j.contains("auto_map");
  c.has_vision_config = j.contains("vision_config") && j["vision_config"].is_object();
  const json* text_cfg = &j;
  if (auto it = j.find("text_config"); it != j.end() && it->is_object()) text_cfg = &*it;
  const json& t = *text_cfg;
  c.text_model_type = get_str(t, "model_type");
  if (c.text_model_type.empty()) c.text_model_type = c.model_type;
  c.hidden_size = get_u64(t, {"hidden_size", "d_model", "n_embd"});
  c.num_layers = get_u64(t, {"num_hidden_layers", "n_layer", "num_layers"});
  c.num_attention_heads = get_u64(t, {"num_attention_heads", "n_head"});
  c.num_key_value_heads = get_u64(t, {"num_key_value_heads"});
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  c.head_dim = get_u64(t, {"head_dim"});
  if (c.head_dim == 0 && c.num_attention_heads > 0) c.head_dim = c.hidden_size / c.num_attention_heads;
  c.intermediate_size = get_u64(t, {"intermediate_size", "ffn_hidden_size", "n_inner"});
  c.vocab_size = get_u64(t, {"vocab_size"});
  if (c.vocab_size == 0) c.vocab_size = get_u64(j, {"vocab_size"});
  c.num_experts =
      get_u64(t, {"num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts"});
  c.experts_per_token = get_u64(t, {"num_experts_per_tok", "moe_topk", "top_k"});
  // The top level decides for multimodal classes; the text config otherwise.
  for (const json* src : std::initializer_list<const json*>{&j, text_cfg}) {
    if (auto it = src->find("tie_word_embeddings"); it != src->end() && it->is_boolean()) {
      c.tie_word_embeddings = it->get<bool>();
      break;
    }
  }
  for (const json* src : std::initializer_list<const json*>{&j, text_cfg}) {
    std::string d = get_str(*src, "dtype");
    if (d.empty()) d = get_str(*src, "torch_dtype");
    if (!d.empty()) {
      c.dtype = d;
      break;
    }
  }
  if (auto it = t.find("hybrid_layer_ids"); it != t.end() && it->is_array()) {
    for (const auto& id : *it) {
      if (id.is_number_unsigned()) c.hybrid_layers.push_back(id.get<uint64_t>());
    }
  } else if (auto types = t.find("layers_block_type"); types != t.end() && types->is_array()) {
    for (size_t i = 0; i < types->size(); ++i) {
      if ((*types)[i] == "hybrid") c.hybrid_layers.push_back(i);
    }
  }
  std::sort(c.hybrid_layers.begin(), c.hybrid_layers.end());
  c.hybrid_layers.erase(std::unique(c.hybrid_layers.begin(), c.hybrid_layers.end()),
                        c.hybrid_layers.end());
  if (auto it = j.find("quantization_config"); it != j.end() && it->is_object()) {
    c.quant_method = get_str(*it, "quant_method");
    if (c.quant_method.empty()) c.quant_method = "unknown";
  }
  return c;
}

Result<ModelConfig> read_config(const std::string& path) {
  auto text = read_text(path, 16 << 20);
  if (!text) return tl::unexpected(text.error());
  return parse_config(*text, path);
}

}  // namespace sparkdoc::plan
