#include "plan/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "plan/names.h"

namespace sparkdoc::plan {
namespace {

// More routed experts per layer than any released model has (DeepSeek-V3 and Qwen3.5 256, Kimi K2
// 384), with room: a header claiming more is not a model, and the planner would otherwise do
// work per claimed expert (issue: a 512-byte header naming 2^36 experts).
constexpr uint64_t kMaxExperts = 4096;

using safetensors::CheckpointTensor;

using detail::leaf_of;
using detail::parent_of;

bool is_vision_path(std::string_view name) {
  for (std::string_view marker : {"visual.", "vision_tower.", "vision_model.", "vision_encoder.",
                                  "multi_modal_projector.", "mm_projector.", "vision."}) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

// The decoder layer a name belongs to: the number after the first "layers." (or "h." for
// GPT-2 style). -1 when none.
int layer_of(std::string_view name) {
  for (std::string_view key : {"layers.", "h."}) {
    size_t at = 0;
    while ((at = name.find(key, at)) != std::string_view::npos) {
      if (at == 0 || name[at - 1] == '.') {
        size_t digits = at + key.size();
        int value = 0;
        auto [p, ec] = std::from_chars(name.data() + digits, name.data() + name.size(), value);
        if (ec == std::errc() && p < name.data() + name.size() && *p == '.') return value;
      }
      at += key.size();
    }
  }
  return -1;
}

bool is_model_type(const ModelConfig& c, std::string_view type) {
  return c.model_type == type || c.text_model_type == type;
}

bool model_type_starts(const ModelConfig& c, std::string_view prefix) {
  return starts_with(c.model_type, prefix) || starts_with(c.text_model_type, prefix);
}

// nn.Embedding (and its subclasses: scaled word embeddings, learned positional embeddings) by
// the last segment of the module path; a 2-D weight of any other name is nn.Linear. Headers
// cannot tell the two apart, so the names are those of every causal-LM and image-text-to-text
// class of transformers 5.17 (bench/plan_sweep.py): "embed_*", "*embed", "*embedding(s)",
// "*embedder", "*_emb", the few bare names below, and two names that say embedding but are
// nn.Linear there (Cosmos 3 and LFM2-VL's patch_embedding over flattened patches, ProphetNet's
// relative_pos_embeddings). all-linear leaves embeddings out, so a wrong guess here shows as an
// extra or a missing module in that count.
bool is_embedding_leaf(std::string_view leaf, const ModelConfig& c) {
  if (leaf == "patch_embedding" || leaf == "relative_pos_embeddings") return false;
  for (std::string_view e : {"shared", "wte", "wpe", "relative_attention_bias",
                             "audio_bos_eos_token", "bias_values", "patch_embeddings_pos"}) {
    if (leaf == e) return true;
  }
  if (leaf == "w" && is_model_type(c, "ctrl")) return true;     // CTRL's token embedding
  if (starts_with(leaf, "embed_")) return leaf != "embed_out";  // GPT-NeoX's output head
  for (std::string_view suffix : {"embed", "embeds", "embedding", "embeddings", "embedder", "_emb",
                                  "embedding_table", "embeddings_table"}) {
    if (ends_with(leaf, suffix)) return true;
  }
  return false;
}

// What get_output_embeddings() returns, by module path, for transformers 5.17's causal-LM and
// image-text-to-text classes (the sweep's `output_embeddings`), the most specific first. It is
// the module all-linear leaves out. A class with its head elsewhere (BLIP's
// text_decoder.cls.predictions.decoder) returns None, and all-linear adapts that head.
constexpr std::string_view kHeadPaths[] = {"lm_head.decoder",
                                           "cls.predictions.decoder",
                                           "lm_head.out_proj",
                                           "decoder.lm_head",
                                           "text_model.lm_head",
                                           "language_model.lm_head",
                                           "pred_layer.proj",
                                           "lm_head",
                                           "embed_out",
                                           "output",
                                           "output_projection",
                                           "generator_lm_head",
                                           "proj_out",
                                           "lm_loss",
                                           "head",
                                           "decoder"};

bool is_output_head(std::string_view module) {
  for (std::string_view h : kHeadPaths) {
    if (module == h) return true;
  }
  return false;
}

// Where a head tied to the input embedding sits when the checkpoint leaves its weight out (as
// save_pretrained does): beside the bias the checkpoint keeps for it (BERT's
// cls.predictions.bias under any prefix, as BLIP's text decoder has it; RoBERTa's lm_head.bias;
// ModernBERT's decoder.bias), else "lm_head".
std::string tied_head_path(const std::vector<CheckpointTensor>& tensors) {
  struct TiedHead {
    std::string_view bias;
    std::string_view head;
    bool any_prefix;
  };
  static constexpr TiedHead kTiedHeads[] = {
      {"cls.predictions.bias", "cls.predictions.decoder", true},
      {"lm_head.bias", "lm_head.decoder", false},
      {"decoder.bias", "decoder", false},
      {"lm_loss.bias", "lm_loss", false},
      {"pred_layer.proj.bias", "pred_layer.proj", false}};
  for (const auto& h : kTiedHeads) {
    for (const auto& t : tensors) {
      std::string_view n = t.name;
      if (n == h.bias) return std::string(h.head);
      if (h.any_prefix && ends_with(n, h.bias) && n[n.size() - h.bias.size() - 1] == '.') {
        return fmt::format("{}{}", n.substr(0, n.size() - h.bias.size()), h.head);
      }
    }
  }
  return "lm_head";
}

// Classes whose config says the embeddings are tied but which declare no tied weights, so the
// head in the checkpoint is a parameter of its own (BigBirdPegasusForCausalLM, CpmAntForCausalLM
// in transformers 5.17; the sweep's `tied` is empty for both).
bool never_ties(const ModelConfig& c) {
  return is_model_type(c, "bigbird_pegasus") || is_model_type(c, "cpmant");
}

// A router beside the experts ("X.router" with "X.experts") is nn.Linear (Llama 4, Jamba, Aria,
// PhiMoE: all-linear adapts it) except in these families, whose TopKRouter holds raw parameters
// (gpt-oss's with a bias) that PEFT cannot wrap. Routers named "gate" are TopKRouter modules in
// every transformers 5 family.
bool router_is_module(const ModelConfig& c) {
  return is_model_type(c, "gpt_oss") || model_type_starts(c, "granitemoe");
}

// Checkpoint tensors that are persistent buffers in transformers 5, not parameters (the sweep's
// `buffers`: state_dict entries that named_parameters() does not list), by the end of the name.
struct NamedBuffer {
  std::string_view suffix;
  std::string_view whose;
};
constexpr NamedBuffer kBuffers[] = {
    {".inv_freq", "rotary embeddings"},
    {".position_ids", "position embeddings"},
    {".masked_bias", "GPT-2 style attention"},
    {".num_batches_tracked", "BatchNorm (FastVLM's timm tower)"},
    {".running_mean", "BatchNorm"},
    {".running_var", "BatchNorm"},
    {".act_fn.beta", "Apertus' xIELU activation (its alpha_p and alpha_n are parameters)"},
    {".act_fn.eps", "Apertus' xIELU activation"},
    {".layer_scalar", "Gemma 4's decoder layers"},
    {".balancing_biases", "ZAYA's router"},
    {".tid2eid", "DeepSeek-V4's hash router"},
    {".query_decay", "MiniMax's lightning attention"},
    {".key_decay", "MiniMax's lightning attention"},
    {".diagonal_decay", "MiniMax's lightning attention"},
    {".slope_rate", "MiniMax's lightning attention"},
    {".global_mean", "Phi-4-multimodal's audio encoder"},
    {".global_invstd", "Phi-4-multimodal's audio encoder"},
    {".pos_idx_to_embed", "Florence-2's temporal embedding"},
};

bool is_buffer(std::string_view name, const ModelConfig& c) {
  for (const auto& b : kBuffers) {
    if (ends_with(name, b.suffix)) return true;
  }
  // The routers' score correction is a buffer, except where the family keeps it as a
  // parameter: ERNIE 4.5's moe_statics module, Laguna's router.
  if (ends_with(name, "e_score_correction_bias")) {
    return name.find(".moe_statics.") == std::string_view::npos && !is_model_type(c, "laguna");
  }
  return false;
}

// Model types whose checkpoints carry a multi-token-prediction head that every transformers
// class ignores (_keys_to_ignore_on_load_unexpected = [r"^mtp.*"], reference §4).
bool drops_mtp(const ModelConfig& c) {
  for (const std::string* t : {&c.model_type, &c.text_model_type}) {
    if (starts_with(*t, "qwen3_5") || *t == "qwen3_next") return true;
  }
  return false;
}

// A per-expert checkpoint tensor: "<prefix>.experts.<e>.<proj>.weight". Views into the name.
struct ExpertPiece {
  std::string_view prefix;  // up to and including ".experts"
  uint64_t expert = 0;
  std::string_view proj;    // gate_proj, up_proj, down_proj, w1, w2, w3
};

std::optional<ExpertPiece> expert_piece(std::string_view name) {
  if (!ends_with(name, ".weight")) return std::nullopt;
  std::string_view module = parent_of(name);
  std::string_view proj = leaf_of(module);
  std::string_view rest = parent_of(module);
  std::string_view index = leaf_of(rest);
  std::string_view experts = parent_of(rest);
  if (leaf_of(experts) != "experts" || index.empty()) return std::nullopt;
  uint64_t e = 0;
  auto [p, ec] = std::from_chars(index.data(), index.data() + index.size(), e);
  if (ec != std::errc() || p != index.data() + index.size()) return std::nullopt;
  return ExpertPiece{experts, e, proj};
}

// Which per-expert projections a prefix has, as bits.
enum ProjBits : unsigned { kGate = 1, kUp = 2, kW1 = 4, kW3 = 8 };
unsigned proj_bit(std::string_view proj) {
  if (proj == "gate_proj") return kGate;
  if (proj == "up_proj") return kUp;
  if (proj == "w1") return kW1;
  if (proj == "w3") return kW3;
  return 0;
}

// The transformers 5 name of a per-expert projection once fused.
std::string_view fused_name(std::string_view proj, bool has_gate_and_up) {
  if (has_gate_and_up && (proj == "gate_proj" || proj == "up_proj" || proj == "w1" ||
                          proj == "w3")) {
    return "gate_up_proj";
  }
  if (proj == "w2") return "down_proj";
  if (proj == "w1") return "gate_proj";
  if (proj == "w3") return "up_proj";
  return proj;
}

// The original (hub) layouts transformers 5.17 converts at load (conversion_mapping.py's
// WeightRenaming and WeightConverter, the layout save_pretrained reverts to): a family's steps,
// applied to the tensor names in order, give the names and shapes of the model's parameters.
// Per-expert tensors are fused afterwards by the general rule. The steps were derived from the
// sweep's two layouts of each class (bench/plan_sweep.py writes both) and reproduce its v5
// names and shapes exactly; they matter where names decide what PEFT targets (Cosmos 3's
// to_q is q_proj, its up_proj fc1), where tensors are split or fused (HRM's gqkv_proj is four
// nn.Linear, MiniMax-M3's shared gate_proj and up_proj one), and where a parameter becomes a
// buffer (DeepSeek-V4's ffn.gate.bias).
enum class StepKind { kRename, kSplit, kMerge, kTranspose, kSplitExperts };

struct Step {
  StepKind kind = StepKind::kRename;
  // kRename: `from` anywhere in the name ('^' at the start, '$' at the end, '#' a run of digits)
  // becomes `to` ('#' the same digits). kSplit: a name ending in `from` becomes one tensor per
  // part, `dim` divided equally. kMerge: names ending in parts[0] and parts[1] with the same
  // stem become one ending in `to`, `dim` summed. kTranspose: a 2-D tensor ending in `from`.
  // kSplitExperts: `from` + e + "." becomes `to` + e for the config's first num_experts experts
  // and parts[0] + (e - num_experts) for the rest.
  std::string_view from;
  std::string_view to;
  std::array<std::string_view, 4> parts{};
  size_t dim = 0;
};

constexpr Step rename(std::string_view from, std::string_view to) {
  return {StepKind::kRename, from, to, {}, 0};
}
constexpr Step split(std::string_view suffix, size_t dim, std::array<std::string_view, 4> parts) {
  return {StepKind::kSplit, suffix, {}, parts, dim};
}
constexpr Step merge(std::string_view first, std::string_view second, std::string_view to,
                     size_t dim) {
  return {StepKind::kMerge, {}, to, {first, second}, dim};
}
constexpr Step transpose(std::string_view suffix) {
  return {StepKind::kTranspose, suffix, {}, {}, 0};
}
constexpr Step split_experts(std::string_view from, std::string_view first, std::string_view rest) {
  return {StepKind::kSplitExperts, from, first, {rest}, 0};
}

constexpr Step kGraniteMoe[] = {
    rename(".block_sparse_moe.input_linear.weight", ".block_sparse_moe.experts.gate_up_proj"),
    rename(".block_sparse_moe.output_linear.weight", ".block_sparse_moe.experts.down_proj"),
    rename(".block_sparse_moe.router.layer.", ".block_sparse_moe.router."),
};
constexpr Step kPhiMoe[] = {
    rename(".block_sparse_moe.gate.", ".mlp.router."),
    rename(".block_sparse_moe.", ".mlp."),
};
constexpr Step kHunyuanV3[] = {
    rename(".mlp.router.gate.", ".mlp.gate."),
    rename(".mlp.shared_mlp.", ".mlp.shared_experts."),
    rename(".mlp.expert_bias", ".mlp.e_score_correction_bias"),
};
constexpr Step kHunyuanV4[] = {
    rename(".linear_gate.", ".gate_proj."),
    rename(".self_attn.learnable_sink_param", ".self_attn.sinks"),
    rename("model.hc_pre.hc_head.hc_head_", "model.hc_head.hc_"),
    rename(".hc_pre.hc_attn_layer.hc_", ".attn_hc."),
    rename(".hc_pre.hc_mlp_layer.hc_", ".ffn_hc."),
};
constexpr Step kDeepseekV4[] = {
    rename("^head.", "lm_head."),
    rename(".attn.indexer.compressor.", ".self_attn.compressor.indexer."),
    rename(".attn.indexer.weights_proj.", ".self_attn.compressor.indexer.scorer.weights_proj."),
    rename(".attn.indexer.wq_b.", ".self_attn.compressor.indexer.q_b_proj."),
    rename(".attn.", ".self_attn."),
    rename(".wgate.", ".gate_proj."),
    rename(".compressor.wkv.", ".compressor.kv_proj."),
    rename(".indexer.wkv.", ".indexer.kv_proj."),
    rename(".ape$", ".position_bias"),
    rename(".compressor.norm.", ".compressor.kv_norm."),
    rename(".indexer.norm.", ".indexer.kv_norm."),
    rename(".self_attn.wq_a.", ".self_attn.q_a_proj."),
    rename(".self_attn.wq_b.", ".self_attn.q_b_proj."),
    rename(".self_attn.wkv.", ".self_attn.kv_proj."),
    rename(".self_attn.wo_a.", ".self_attn.o_a_proj."),
    rename(".self_attn.wo_b.", ".self_attn.o_b_proj."),
    rename(".self_attn.attn_sink", ".self_attn.sinks"),
    rename(".self_attn.q_norm.", ".self_attn.q_a_norm."),
    rename(".self_attn.norm.", ".self_attn.kv_norm."),
    rename(".attn_norm.", ".input_layernorm."),
    rename(".ffn_norm.", ".post_attention_layernorm."),
    rename(".hc_attn_", ".attn_hc."),
    rename(".hc_ffn_", ".ffn_hc."),
    rename(".ffn.gate.bias", ".mlp.gate.e_score_correction_bias"),
    rename(".ffn.", ".mlp."),
    rename(".shared_experts.w1.", ".shared_experts.gate_proj."),
    rename(".shared_experts.w2.", ".shared_experts.down_proj."),
    rename(".shared_experts.w3.", ".shared_experts.up_proj."),
};
constexpr Step kHrmText[] = {
    rename(".attn.", ".self_attn."),
    split(".self_attn.gqkv_proj.weight", 0,
          {".self_attn.gate_proj.weight", ".self_attn.q_proj.weight", ".self_attn.k_proj.weight",
           ".self_attn.v_proj.weight"}),
    split(".mlp.gate_up_proj.weight", 0, {".mlp.gate_proj.weight", ".mlp.up_proj.weight"}),
};
constexpr Step kQianfanOcr[] = {
    rename("^language_model.lm_head.", "lm_head."),
    rename("^language_model.model.encoder.", "model.language_model."),
    rename("^language_model.model.", "model.language_model."),
    rename("^mlp1.0.", "model.multi_modal_projector.layer_norm."),
    rename("^mlp1.1.", "model.multi_modal_projector.linear_1."),
    rename("^mlp1.3.", "model.multi_modal_projector.linear_2."),
    rename("^vision_model.encoder.layers.", "model.vision_tower.layers."),
    rename("^vision_model.", "model.vision_tower."),
    rename(".embeddings.class_embedding", ".embeddings.cls_token"),
    rename(".embeddings.patch_embedding.", ".embeddings.patch_embeddings.projection."),
    rename(".embeddings.position_embedding", ".embeddings.position_embeddings"),
    rename(".attn.proj.", ".attention.projection_layer."),
    split(".attn.qkv.weight", 0,
          {".attention.q_proj.weight", ".attention.k_proj.weight", ".attention.v_proj.weight"}),
    split(".attn.qkv.bias", 0,
          {".attention.q_proj.bias", ".attention.k_proj.bias", ".attention.v_proj.bias"}),
    rename(".ls1$", ".lambda_1"),
    rename(".ls2$", ".lambda_2"),
    rename(".norm1.", ".layernorm_before."),
    rename(".norm2.", ".layernorm_after."),
};
constexpr Step kCosmos3Edge[] = {
    rename("^embed_tokens.", "model.language_model.embed_tokens."),
    rename("^layers.", "model.language_model.layers."),
    rename("^norm.", "model.language_model.norm."),
    rename(".self_attn.to_q.", ".self_attn.q_proj."),
    rename(".self_attn.to_k.", ".self_attn.k_proj."),
    rename(".self_attn.to_v.", ".self_attn.v_proj."),
    rename(".self_attn.to_out.", ".self_attn.o_proj."),
    rename(".mlp.up_proj.", ".mlp.fc1."),
    rename(".mlp.down_proj.", ".mlp.fc2."),
};
constexpr Step kCosmos3Omni[] = {
    rename("^embed_tokens.", "model.language_model.embed_tokens."),
    rename("^layers.", "model.language_model.layers."),
    rename("^norm.", "model.language_model.norm."),
    rename("^blocks.", "model.visual.blocks."),
    rename("^merger.", "model.visual.merger."),
    rename("^deepstack_merger_list.", "model.visual.deepstack_merger_list."),
    rename("^patch_embed.", "model.visual.patch_embed."),
    rename("^pos_embed.", "model.visual.pos_embed."),
    rename(".self_attn.to_q.", ".self_attn.q_proj."),
    rename(".self_attn.to_k.", ".self_attn.k_proj."),
    rename(".self_attn.to_v.", ".self_attn.v_proj."),
    rename(".self_attn.to_out.", ".self_attn.o_proj."),
    rename(".self_attn.norm_q.", ".self_attn.q_norm."),
    rename(".self_attn.norm_k.", ".self_attn.k_norm."),
};
constexpr Step kKimiK25[] = {
    rename("^language_model.lm_head.", "lm_head."),
    rename("^language_model.model.blocks.", "model.language_model.layers."),
    rename("^language_model.model.", "model.language_model."),
    rename("^mm_projector.proj.0.", "model.mm_projector.in_proj."),
    rename("^mm_projector.proj.2.", "model.mm_projector.out_proj."),
    rename("^mm_projector.", "model.mm_projector."),
    rename("^vision_tower.encoder.blocks.", "model.vision_tower.layers."),
    rename("^vision_tower.encoder.", "model.vision_tower."),
    rename("^vision_tower.", "model.vision_tower."),
    rename(".pos_emb.weight", ".pos_emb.position_embeddings"),
    split(".wqkv.weight", 0, {".attn.q_proj.weight", ".attn.k_proj.weight", ".attn.v_proj.weight"}),
    split(".wqkv.bias", 0, {".attn.q_proj.bias", ".attn.k_proj.bias", ".attn.v_proj.bias"}),
    rename(".wo.", ".attn.proj."),
    rename(".mlp.fc1.", ".mlp.fc2."),
    rename(".mlp.fc0.", ".mlp.fc1."),
    rename(".norm1.", ".norm2."),
    rename(".norm0.", ".norm1."),
};
constexpr Step kMiniMaxM3[] = {
    rename("^language_model.lm_head.", "lm_head."),
    rename("^language_model.model.", "model.language_model."),
    rename(".block_sparse_moe.e_score_correction_bias", ".mlp.gate.e_score_correction_bias"),
    rename(".block_sparse_moe.gate.", ".mlp.gate."),
    rename(".block_sparse_moe.experts.", ".mlp.experts."),
    rename(".block_sparse_moe.shared_experts.", ".mlp.shared_experts."),
    merge(".mlp.shared_experts.gate_proj.weight", ".mlp.shared_experts.up_proj.weight",
          ".mlp.shared_experts.gate_up_proj.weight", 0),
    rename("^multi_modal_projector.", "model.multi_modal_projector."),
    rename("^patch_merge_mlp.linear_", "model.multi_modal_projector.merge_linear_"),
    rename("^vision_tower.vision_model.encoder.layers.", "model.vision_tower.layers."),
    rename("^vision_tower.vision_model.embeddings.patch_embedding.",
           "model.vision_tower.embeddings.proj."),
    rename("^vision_tower.vision_model.", "model.vision_tower."),
    rename(".block_sparse_moe.fc", ".mlp.fc"),
};
constexpr Step kInkling[] = {
    rename("^model.llm.unembed.", "lm_head."),
    rename("^model.llm.embed.", "model.language_model.embed_tokens."),
    rename("^model.llm.", "model.language_model."),
    rename("^model.audio.encoder.", "model.audio_tower.embed_audio_tokens.embed_audio_tokens."),
    rename("^model.audio.final_norm.", "model.audio_tower.norm."),
    rename("^model.visual.layers.linear_#.", "model.vision_tower.encoder_layers.#.projection."),
    rename("^model.visual.layers.norm_#.", "model.vision_tower.encoder_layers.#.layer_norm."),
    rename("^model.visual.", "model.vision_tower."),
    rename(".attn.wq_du.", ".self_attn.q_proj."),
    rename(".attn.wk_dv.", ".self_attn.k_proj."),
    rename(".attn.wv_dv.", ".self_attn.v_proj."),
    rename(".attn.wo_ud.", ".self_attn.o_proj."),
    rename(".attn.wr_du.", ".self_attn.r_proj."),
    rename(".attn.k_sconv.", ".self_attn.k_sconv.conv1d."),
    rename(".attn.v_sconv.", ".self_attn.v_sconv.conv1d."),
    rename(".attn.", ".self_attn."),
    rename(".attn_sconv.", ".attn_sconv.conv1d."),
    rename(".mlp_sconv.", ".mlp_sconv.conv1d."),
    rename(".attn_norm.", ".input_layernorm."),
    rename(".mlp_norm.", ".post_attention_layernorm."),
    rename(".mlp.experts.w13_weight$", ".mlp.experts.gate_up_proj"),
    rename(".mlp.experts.w2_weight$", ".mlp.experts.down_proj"),
    rename(".mlp.gate.bias$", ".mlp.gate.e_score_correction_bias"),
    split(".shared_experts.shared_w13_weight", 1,
          {".shared_experts.gate_proj", ".shared_experts.up_proj"}),
    rename(".shared_experts.shared_w2_weight$", ".shared_experts.down_proj"),
};
constexpr Step kStep3p7[] = {
    rename("^model.", "model.language_model."),
    merge(".moe.gate_proj.weight", ".moe.up_proj.weight", ".mlp.experts.gate_up_proj", 1),
    rename(".moe.down_proj.weight$", ".mlp.experts.down_proj"),
    rename(".moe.router_bias$", ".mlp.gate.e_score_correction_bias"),
    rename(".moe.gate.", ".mlp.gate."),
    rename(".share_expert.", ".mlp.shared_experts."),
    rename("^vit_large_projector.", "model.multi_modal_projector."),
    rename("^vision_model.transformer.resblocks.", "model.vision_model.layers."),
    rename("^vision_model.conv1.", "model.vision_model.embeddings.patch_embedding."),
    rename("^vision_model.positional_embedding",
           "model.vision_model.embeddings.position_embedding.weight"),
    rename("^vision_model.ln_pre.", "model.vision_model.pre_layernorm."),
    rename("^vision_model.vit_downsampler", "model.vision_model.downsampler"),
    rename("^vision_model.", "model.vision_model."),
    split(".attn.in_proj_weight", 0,
          {".self_attn.q_proj.weight", ".self_attn.k_proj.weight", ".self_attn.v_proj.weight"}),
    split(".attn.in_proj_bias", 0,
          {".self_attn.q_proj.bias", ".self_attn.k_proj.bias", ".self_attn.v_proj.bias"}),
    rename(".attn.out_proj.", ".self_attn.out_proj."),
    rename(".ln_1.", ".layernorm_before."),
    rename(".ln_2.", ".layernorm_after."),
    rename(".ls_1.gamma$", ".lambda_1"),
    rename(".ls_2.gamma$", ".lambda_2"),
    rename(".mlp.c_fc.", ".mlp.fc1."),
    rename(".mlp.c_proj.", ".mlp.fc2."),
};
constexpr Step kPi0[] = {
    rename("^paligemma_with_expert.gemma_expert.lm_head.", "model.dit.embed_tokens."),
    rename("^paligemma_with_expert.gemma_expert.model.", "model.dit."),
    rename("^paligemma_with_expert.paligemma.model.language_model.model.",
           "model.vlm.language_model."),
    rename("^paligemma_with_expert.paligemma.model.", "model.vlm."),
    rename("^action_in_proj.", "embed_action_time.action_in_proj."),
    rename("^action_time_mlp_", "embed_action_time.action_time_mlp_"),
    rename("^state_proj.", "embed_action_time.state_proj."),
};
constexpr Step kErnie45VlMoe[] = {
    rename("^model.vision_model.", "model.vision_tower."),
    rename("_linear.0.", "_linear.fc1."),
    rename("_linear.2.", "_linear.fc2."),
    rename("_linear.3.", "_linear.ln."),
    rename("^model.embed_tokens.", "model.language_model.embed_tokens."),
    rename("^model.layers.", "model.language_model.layers."),
    rename("^model.norm.", "model.language_model.norm."),
    split_experts(".mlp.experts.", ".mlp.text_moe.experts.", ".mlp.vision_moe.experts."),
    transpose(".mlp.gate.weight_1"),
    transpose(".mlp.gate.weight"),
    rename(".mlp.gate.weight_1$", ".mlp.vision_moe.gate.weight"),
    rename(".mlp.gate.weight$", ".mlp.text_moe.gate.weight"),
    split(".mlp.moe_statics.e_score_correction_bias", 0,
          {".mlp.text_moe.gate.moe_statics.e_score_correction_bias",
           ".mlp.vision_moe.gate.moe_statics.e_score_correction_bias"}),
};

struct HubLayout {
  std::string_view model_type;  // config.json's (top level)
  std::string_view marker;      // a name only that layout has ('^' at the start)
  std::span<const Step> steps;
};
constexpr HubLayout kHubLayouts[] = {
    {"granitemoe", ".block_sparse_moe.input_linear.", kGraniteMoe},
    {"granitemoehybrid", ".block_sparse_moe.input_linear.", kGraniteMoe},
    {"granitemoeshared", ".block_sparse_moe.input_linear.", kGraniteMoe},
    {"phimoe", ".block_sparse_moe.", kPhiMoe},
    {"hy_v3", ".mlp.router.gate.", kHunyuanV3},
    {"hy_v4", ".hc_pre.", kHunyuanV4},
    {"deepseek_v4", ".ffn.", kDeepseekV4},
    {"hrm_text", ".attn.gqkv_proj.", kHrmText},
    {"qianfan_ocr", "^language_model.", kQianfanOcr},
    {"cosmos3_edge", "^layers.", kCosmos3Edge},
    {"cosmos3_omni", "^layers.", kCosmos3Omni},
    {"kimi_k25", "^language_model.", kKimiK25},
    {"minimax_m3_vl", "^language_model.", kMiniMaxM3},
    {"inkling_mm_model", "^model.llm.", kInkling},
    {"step3p7", ".share_expert.", kStep3p7},
    {"pi0", "^paligemma_with_expert.", kPi0},
    {"ernie4_5_vl_moe", "^model.layers.", kErnie45VlMoe},
};

bool has_marker(std::string_view name, std::string_view marker) {
  if (starts_with(marker, "^")) return starts_with(name, marker.substr(1));
  return name.find(marker) != std::string_view::npos;
}

// Where `pattern` (see Step::from) matches in `name`: [begin, end) and the digits '#' matched.
struct Match {
  size_t begin = 0, end = 0;
  std::string_view digits;
};
std::optional<Match> find_pattern(std::string_view name, std::string_view pattern) {
  bool at_start = starts_with(pattern, "^");
  bool at_end = ends_with(pattern, "$");
  pattern =
      pattern.substr(at_start ? 1 : 0, pattern.size() - (at_start ? 1 : 0) - (at_end ? 1 : 0));
  size_t hash = pattern.find('#');
  std::string_view pre = pattern.substr(0, hash);
  std::string_view post =
      hash == std::string_view::npos ? std::string_view() : pattern.substr(hash + 1);
  for (size_t at = name.find(pre); at != std::string_view::npos; at = name.find(pre, at + 1)) {
    if (at_start && at != 0) return std::nullopt;
    size_t end = at + pre.size();
    Match m{at, end, {}};
    if (hash != std::string_view::npos) {
      while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
      if (end == at + pre.size() || name.substr(end, post.size()) != post) continue;
      m.digits = name.substr(at + pre.size(), end - at - pre.size());
      end += post.size();
      m.end = end;
    }
    if (at_end && m.end != name.size()) continue;
    return m;
  }
  return std::nullopt;
}

CheckpointTensor part_of(const CheckpointTensor& t, std::string name, size_t dim, uint64_t parts) {
  CheckpointTensor p = t;
  p.name = std::move(name);
  p.shape[dim] /= parts;
  p.bytes = t.bytes / parts;
  return p;
}

void apply_step(const Step& s, std::vector<CheckpointTensor>& tensors, const ModelConfig& c) {
  std::vector<CheckpointTensor> out;
  out.reserve(tensors.size());
  switch (s.kind) {
    case StepKind::kRename:
      for (auto& t : tensors) {
        if (auto m = find_pattern(t.name, s.from)) {
          std::string to(s.to);
          if (size_t hash = to.find('#'); hash != std::string::npos) to.replace(hash, 1, m->digits);
          t.name.replace(m->begin, m->end - m->begin, to);
        }
      }
      return;
    case StepKind::kTranspose:
      for (auto& t : tensors) {
        if (t.shape.size() == 2 && ends_with(t.name, s.from)) std::swap(t.shape[0], t.shape[1]);
      }
      return;
    case StepKind::kSplit: {
      uint64_t n = 0;
      while (n < s.parts.size() && !s.parts[n].empty()) ++n;
      for (auto& t : tensors) {
        if (!ends_with(t.name, s.from) || t.shape.size() <= s.dim || t.shape[s.dim] % n != 0) {
          out.push_back(std::move(t));
          continue;
        }
        std::string_view stem = std::string_view(t.name).substr(0, t.name.size() - s.from.size());
        for (uint64_t i = 0; i < n; ++i) {
          out.push_back(part_of(t, fmt::format("{}{}", stem, s.parts[i]), s.dim, n));
        }
      }
      break;
    }
    case StepKind::kMerge: {
      std::map<std::string, std::array<size_t, 2>> pairs;  // stem -> indexes + 1
      for (size_t i = 0; i < tensors.size(); ++i) {
        for (size_t k = 0; k < 2; ++k) {
          if (ends_with(tensors[i].name, s.parts[k])) {
            pairs[tensors[i].name.substr(0, tensors[i].name.size() - s.parts[k].size())][k] = i + 1;
          }
        }
      }
      std::vector<bool> merged(tensors.size(), false);
      for (const auto& [stem, at] : pairs) {
        if (at[0] == 0 || at[1] == 0) continue;
        const CheckpointTensor& a = tensors[at[0] - 1];
        const CheckpointTensor& b = tensors[at[1] - 1];
        if (a.shape.size() != b.shape.size() || a.shape.size() <= s.dim) continue;
        CheckpointTensor m = a;
        m.name = stem + std::string(s.to);
        m.shape[s.dim] += b.shape[s.dim];
        m.bytes += b.bytes;
        merged[at[0] - 1] = merged[at[1] - 1] = true;
        out.push_back(std::move(m));
      }
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (!merged[i]) out.push_back(std::move(tensors[i]));
      }
      break;
    }
    case StepKind::kSplitExperts: {
      // The first num_experts are the text experts; without the config's count, half of them.
      uint64_t first = c.num_experts;
      if (first == 0) {
        for (const auto& t : tensors) {
          if (auto piece = expert_piece(t.name)) first = std::max(first, piece->expert + 1);
        }
        first /= 2;
      }
      for (auto& t : tensors) {
        size_t at = t.name.find(s.from);
        if (at == std::string::npos) continue;
        size_t digits = at + s.from.size();
        uint64_t e = 0;
        auto [p, ec] = std::from_chars(t.name.data() + digits, t.name.data() + t.name.size(), e);
        if (ec != std::errc() || p == t.name.data() + t.name.size() || *p != '.') continue;
        size_t end = static_cast<size_t>(p - t.name.data());
        std::string to =
            e < first ? fmt::format("{}{}", s.to, e) : fmt::format("{}{}", s.parts[0], e - first);
        t.name.replace(at, end - at, to);
      }
      return;
    }
  }
  tensors = std::move(out);
}

// The tensors as transformers 5.17 loads them: converted when the checkpoint is in a family's
// original layout (a note says so), else as they are (nullopt).
std::optional<std::vector<CheckpointTensor>> convert_hub_layout(
    const std::vector<CheckpointTensor>& tensors, const ModelConfig& c,
    std::vector<std::string>& notes) {
  for (const auto& layout : kHubLayouts) {
    if (c.model_type != layout.model_type) continue;
    bool hub = std::any_of(tensors.begin(), tensors.end(), [&](const CheckpointTensor& t) {
      return has_marker(t.name, layout.marker);
    });
    if (!hub) return std::nullopt;
    std::vector<CheckpointTensor> converted = tensors;
    for (const auto& step : layout.steps) apply_step(step, converted, c);
    notes.push_back(
        fmt::format("{} checkpoint in its original layout: {} tensors renamed, split "
                    "and fused as transformers 5.17 loads them ({} after)",
                    c.model_type, tensors.size(), converted.size()));
    return converted;
  }
  return std::nullopt;
}

struct PairHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& p) const {
    return std::hash<std::string_view>()(p.first) * 31 + std::hash<std::string_view>()(p.second);
  }
};

struct FusedGroup {
  uint64_t experts = 0;       // highest index + 1
  uint64_t count = 0;         // pieces seen
  uint64_t d1 = 0, d2 = 0;    // fused [E, d1, d2]
  uint64_t bytes = 0;
  uint64_t numel = 0;
};

// Zamba and Zamba 2 run a shared transformer block in every hybrid layer (Zamba 2 cycles through
// num_mem_blocks of them). The checkpoint holds each block once, under the first hybrid layer(s)
// that run it; every other hybrid layer has modules of its own whose weights are tied to those
// (the sweep's `tied`), so they add no parameters, and PEFT wraps each of them: Zamba-7B's 13
// hybrid layers give 91 adapted modules for q,k,v,o,gate,up,down, not 7. The copies go to hybrid
// layers the checkpoint has other tensors of, so config.json alone cannot make any.
void share_hybrid_blocks(ModelView& v, const ModelConfig& c) {
  std::map<int, std::vector<size_t>> blocks;  // layer -> its shared-block modules
  std::set<int> layers;
  for (size_t i = 0; i < v.modules.size(); ++i) {
    const Module& m = v.modules[i];
    if (m.layer < 0 || m.tower != Tower::kText) continue;
    layers.insert(m.layer);
    if (m.name.find(".shared_transf") != std::string::npos) blocks[m.layer].push_back(i);
  }
  std::vector<int> sources;  // hybrid layers holding a block, in order
  std::vector<int> hybrid;
  for (uint64_t h : c.hybrid_layers) {
    if (h > static_cast<uint64_t>(std::numeric_limits<int>::max())) break;
    auto layer = static_cast<int>(h);
    hybrid.push_back(layer);
    if (blocks.count(layer)) sources.push_back(layer);
  }
  if (sources.empty()) return;
  uint64_t copies = 0;
  for (size_t j = 0; j < hybrid.size(); ++j) {
    int layer = hybrid[j];
    if (blocks.count(layer) || !layers.count(layer)) continue;
    int source = sources[j % sources.size()];
    std::string from = fmt::format("layers.{}.", source);
    std::string to = fmt::format("layers.{}.", layer);
    for (size_t i : blocks[source]) {
      Module m = v.modules[i];
      size_t at = m.name.find(from);
      if (at == std::string::npos) continue;
      m.name.replace(at, from.size(), to);
      m.layer = layer;
      m.weight_numel = 0;
      v.modules.push_back(std::move(m));
      ++copies;
    }
  }
  if (copies > 0) {
    v.notes.push_back(
        fmt::format("{} modules of the shared transformer block(s) in the other "
                    "hybrid layers, weights tied (counted once, adapted in each)",
                    copies));
  }
}

}  // namespace

std::string_view module_kind_name(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::kLinear: return "Linear";
    case ModuleKind::kEmbedding: return "Embedding";
    case ModuleKind::kConv: return "Conv";
    case ModuleKind::kExperts: return "Experts";
    case ModuleKind::kRouter: return "Router";
    case ModuleKind::kNorm: return "Norm";
    case ModuleKind::kOther: return "Parameter";
  }
  return "?";
}

Result<ModelView> build_model_view(const safetensors::Checkpoint& ck, const ModelConfig& config) {
  ModelView v;
  v.config = config;
  bool mtp = drops_mtp(config);
  for (const auto& t : ck.tensors)
    v.largest_tensor_bytes = std::max(v.largest_tensor_bytes, t.bytes);
  auto converted = convert_hub_layout(ck.tensors, config, v.notes);
  const std::vector<CheckpointTensor>& tensors = converted ? *converted : ck.tensors;

  std::map<std::string, DroppedGroup> dropped;
  auto drop = [&](const std::string& reason, const CheckpointTensor& t) {
    auto& g = dropped[reason];
    g.reason = reason;
    ++g.tensors;
    g.params += t.numel();
  };

  // Pass 1: which module paths exist, to tell routers ("X.gate" beside "X.experts") and to find
  // the experts that come per expert. Names are views into the checkpoint's tensors.
  std::unordered_set<std::string_view> expert_parents;  // "...mlp" of "...mlp.experts"
  std::unordered_map<std::string_view, unsigned> expert_projs;  // prefix -> ProjBits
  std::string_view last_parent;
  for (const auto& t : tensors) {
    std::string_view n = t.name;
    size_t at = n.find(".experts.");
    if (at == std::string_view::npos) continue;
    std::string_view parent = n.substr(0, at);
    if (parent != last_parent) {
      expert_parents.insert(parent);
      last_parent = parent;
    }
    if (auto piece = expert_piece(n)) expert_projs[piece->prefix] |= proj_bit(piece->proj);
  }
  auto has_gate_and_up = [&](std::string_view prefix) {
    auto it = expert_projs.find(prefix);
    if (it == expert_projs.end()) return false;
    return ((it->second & kGate) && (it->second & kUp)) || ((it->second & kW1) && (it->second & kW3));
  };

  // The input embedding: the first embedding-named 2-D weight outside the vision tower. The
  // output head: the first of kHeadPaths the checkpoint holds.
  const CheckpointTensor* embed = nullptr;
  const CheckpointTensor* head = nullptr;
  size_t head_rank = std::size(kHeadPaths);
  for (const auto& t : tensors) {
    if (!ends_with(t.name, ".weight") || t.shape.size() != 2) continue;
    std::string_view module = parent_of(t.name);
    if (is_vision_path(t.name)) continue;
    std::string_view leaf = leaf_of(module);
    if (!embed && (leaf == "embed_tokens" || leaf == "embeddings" || leaf == "word_embeddings" ||
                   leaf == "wte" || leaf == "tok_embeddings" || leaf == "embed_in" ||
                   leaf == "tokens_embed" || leaf == "word_embedding" ||
                   leaf == "input_embedding" || (leaf == "w" && is_model_type(config, "ctrl")))) {
      embed = &t;
    }
    for (size_t i = 0; i < head_rank; ++i) {
      if (module == kHeadPaths[i]) {
        head = &t;
        head_rank = i;
        break;
      }
    }
    // Failing those, an lm_head inside a wrapper (PI0's paligemma_with_expert.gemma_expert).
    if (!head && leaf == "lm_head") head = &t;
  }
  // transformers' default is to tie when the config does not say; a checkpoint without its head
  // is tied as well.
  bool tie = config.tie_word_embeddings.value_or(head == nullptr);
  if (tie && head && never_ties(config)) {
    tie = false;
    v.notes.push_back(
        fmt::format("{} does not tie its output head to the input embedding "
                    "whatever config.json says: both counted",
                    config.model_type));
  }
  if (!head && embed && !tie) {
    v.notes.push_back("config.json says the embeddings are not tied but the checkpoint has no "
                      "output head: transformers initialises one (counted)");
  }
  v.tied = tie && embed != nullptr;
  if (embed) v.embedding = std::string(parent_of(embed->name));
  if (head) {
    v.output_head = std::string(parent_of(head->name));
  } else if (v.tied) {
    v.output_head = tied_head_path(tensors);
  } else {
    v.output_head = "lm_head";
  }
  // A tied head away from the top (BLIP's) is not what get_output_embeddings() returns.
  if (head || is_output_head(v.output_head)) v.output_embeddings = v.output_head;

  std::unordered_map<std::pair<std::string_view, std::string_view>, FusedGroup, PairHash>
      fused;  // (experts prefix, fused leaf) -> group
  for (const auto& t : tensors) {
    const std::string& n = t.name;
    if (mtp && (starts_with(n, "mtp.") || n.find(".mtp.") != std::string::npos)) {
      drop("mtp.* (multi-token prediction head; transformers does not load it)", t);
      continue;
    }
    if (is_buffer(n, config)) {
      drop("buffers saved in the checkpoint (not parameters)", t);
      continue;
    }
    if (v.tied && head == &t) {
      drop("output head tied to the input embedding (counted once)", t);
      continue;
    }
    uint64_t numel = t.numel();
    v.total_params += numel;
    v.weight_bytes += t.bytes;
    auto piece = expert_piece(n);  // routed experts are never in a vision tower
    if (safetensors::dtype_is_float(t.dtype)) {
      v.float_params += numel;
      v.float_bytes += t.bytes;
    }
    bool vision = !piece && is_vision_path(n);
    if (vision) v.vision_params += numel;

    if (piece && piece->expert >= kMaxExperts) {
      v.notes.push_back(
          fmt::format("{} names expert {}, more than any model has ({} at the "
                      "most): not counted as an expert",
                      n, piece->expert, kMaxExperts));
      piece.reset();
    }
    if (piece) {
      bool gu = has_gate_and_up(piece->prefix);
      std::string_view leaf = fused_name(piece->proj, gu);
      auto& g = fused[{piece->prefix, leaf}];
      g.experts = std::max(g.experts, piece->expert + 1);
      ++g.count;
      g.bytes += t.bytes;
      g.numel += numel;
      if (leaf == "gate_up_proj") {
        // gate and up stack along the output dimension: [E, 2I, H].
        if (piece->proj == "gate_proj" || piece->proj == "w1") g.d1 = t.shape[0] * 2;
        if (g.d1 == 0) g.d1 = t.shape[0] * 2;
        g.d2 = t.shape[1];
      } else {
        g.d1 = t.shape[0];
        g.d2 = t.shape[1];
      }
      continue;
    }

    Module m;
    m.tower = vision ? Tower::kVision : Tower::kText;
    m.layer = vision ? -1 : layer_of(n);
    v.parameter_paths.push_back(n);
    bool is_weight = ends_with(n, ".weight");
    std::string_view module = is_weight ? parent_of(n) : std::string_view(n);
    std::string_view leaf = leaf_of(module);
    std::string_view parent = parent_of(module);
    // A 3-D parameter of a module named experts is the routed experts, fused: on disk already in
    // transformers 5's layout (gpt-oss; "X.experts.gate_up_proj") or as a 3-D weight of a
    // grouped-GEMM module (Aria's experts.fc1.weight, JetMoE's experts.input_linear.weight).
    if (t.shape.size() == 3 && leaf_of(parent) == "experts") {
      if (t.shape[0] > kMaxExperts) {
        v.notes.push_back(
            fmt::format("{} claims {} experts, more than any model has ({} at the "
                        "most): not counted as experts",
                        n, t.shape[0], kMaxExperts));
      } else {
        m.kind = ModuleKind::kExperts;
        m.name = n;
        m.experts = t.shape[0];
        m.out = t.shape[1];
        m.in = t.shape[2];
        m.weight_numel = numel;
        v.modules.push_back(std::move(m));
      }
      continue;
    }
    if (!is_weight) continue;
    m.name = std::string(module);
    m.weight_numel = numel;
    if (t.shape.size() == 1) {
      m.kind = ModuleKind::kNorm;
    } else if (t.shape.size() == 2) {
      bool beside_experts = expert_parents.count(parent) != 0;
      if (beside_experts && (leaf == "gate" || (leaf == "router" && router_is_module(config)))) {
        m.kind = ModuleKind::kRouter;
        m.out = t.shape[0];
        m.in = t.shape[1];
      } else if (is_embedding_leaf(leaf, config)) {
        m.kind = ModuleKind::kEmbedding;
        m.in = t.shape[0];
        m.out = t.shape[1];
      } else {
        m.kind = ModuleKind::kLinear;
        m.out = t.shape[0];
        m.in = t.shape[1];
      }
    } else if (t.shape.size() >= 3) {
      m.kind = ModuleKind::kConv;
      m.out = t.shape[0];
      m.in = t.shape[1];
      for (size_t i = 2; i < t.shape.size(); ++i) m.kernel_elems *= t.shape[i];
    } else {
      m.kind = ModuleKind::kOther;
    }
    v.modules.push_back(std::move(m));
  }

  for (auto& [key, g] : fused) {
    std::string path = fmt::format("{}.{}", key.first, key.second);
    Module m;
    m.name = path;
    m.kind = ModuleKind::kExperts;
    m.experts = g.experts;
    m.out = g.d1;
    m.in = g.d2;
    m.weight_numel = g.numel;
    m.per_expert_on_disk = true;
    m.layer = layer_of(path);
    m.tower = is_vision_path(path) ? Tower::kVision : Tower::kText;
    v.largest_fused_bytes = std::max(v.largest_fused_bytes, g.bytes);
    v.parameter_paths.push_back(path);
    v.modules.push_back(std::move(m));
  }
  if (!fused.empty()) {
    v.notes.push_back(fmt::format(
        "experts stored one tensor per expert ({} groups): transformers 5 fuses each projection "
        "into one 3-D parameter at load",
        fused.size()));
  }

  // A tied head is still a module (nn.Linear sharing the embedding's weight).
  if (v.tied && embed) {
    Module m;
    m.name = v.output_head;
    m.kind = ModuleKind::kLinear;
    m.out = embed->shape[0];
    m.in = embed->shape[1];
    v.modules.push_back(std::move(m));
  }

  if (model_type_starts(config, "zamba")) share_hybrid_blocks(v, config);

  std::sort(v.modules.begin(), v.modules.end(),
            [](const Module& a, const Module& b) { return a.name < b.name; });
  std::sort(v.parameter_paths.begin(), v.parameter_paths.end());
  int max_layer = -1;
  for (const auto& m : v.modules) {
    if (m.tower == Tower::kText) max_layer = std::max(max_layer, m.layer);
  }
  v.num_layers = max_layer + 1;
  for (auto& [reason, g] : dropped) v.dropped.push_back(g);
  if (v.total_params == 0) return fail("the checkpoint holds no model parameters");
  return v;
}

}  // namespace sparkdoc::plan
