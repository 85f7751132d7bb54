#include "plan/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>
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
std::string tied_head_path(const safetensors::Checkpoint& ck) {
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
    for (const auto& t : ck.tensors) {
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
  // HunYuan V3's checkpoints name its e_score_correction_bias so; AFMoE's expert_bias is a
  // parameter.
  if (ends_with(name, ".expert_bias")) return is_model_type(c, "hy_v3");
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
  for (const auto& t : ck.tensors) {
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
  for (const auto& t : ck.tensors) {
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
    v.output_head = tied_head_path(ck);
  } else {
    v.output_head = "lm_head";
  }
  // A tied head away from the top (BLIP's) is not what get_output_embeddings() returns.
  if (head || is_output_head(v.output_head)) v.output_embeddings = v.output_head;

  std::unordered_map<std::pair<std::string_view, std::string_view>, FusedGroup, PairHash>
      fused;  // (experts prefix, fused leaf) -> group
  for (const auto& t : ck.tensors) {
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
    v.largest_tensor_bytes = std::max(v.largest_tensor_bytes, t.bytes);
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
