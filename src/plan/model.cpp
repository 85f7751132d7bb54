#include "plan/model.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
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

bool is_embedding_leaf(std::string_view leaf) {
  for (std::string_view e : {"embed_tokens", "embeddings", "word_embeddings", "wte", "wpe",
                             "position_embedding", "position_embeddings", "pos_embed",
                             "embed_positions", "token_type_embeddings", "tok_embeddings",
                             "embedding", "shared", "patch_embeddings_pos"}) {
    if (leaf == e) return true;
  }
  return false;
}

bool is_output_head(std::string_view module) {
  std::string_view leaf = leaf_of(module);
  return leaf == "lm_head" || leaf == "embed_out" || (module == "output");
}

// Checkpoint tensors that are buffers in transformers 5, not parameters.
bool is_buffer(std::string_view name) {
  for (std::string_view suffix : {".inv_freq", "e_score_correction_bias", ".position_ids",
                                  ".num_batches_tracked", ".masked_bias"}) {
    if (ends_with(name, suffix)) return true;
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

  // The embedding: an embedding-named 2-D weight outside the vision tower.
  const CheckpointTensor* embed = nullptr;
  const CheckpointTensor* head = nullptr;
  for (const auto& t : ck.tensors) {
    if (!ends_with(t.name, ".weight") || t.shape.size() != 2) continue;
    std::string_view module = parent_of(t.name);
    if (is_vision_path(t.name)) continue;
    std::string_view leaf = leaf_of(module);
    if (!embed && (leaf == "embed_tokens" || leaf == "embeddings" || leaf == "word_embeddings" ||
                   leaf == "wte" || leaf == "tok_embeddings")) {
      embed = &t;
    }
    if (is_output_head(module)) head = &t;
  }
  // transformers' default is to tie when the config does not say; a checkpoint without its head
  // is tied as well.
  bool tie = config.tie_word_embeddings.value_or(head == nullptr);
  if (!head && embed && !tie) {
    v.notes.push_back("config.json says the embeddings are not tied but the checkpoint has no "
                      "output head: transformers initialises one (counted)");
  }
  v.tied = tie && embed != nullptr;
  if (embed) v.embedding = std::string(parent_of(embed->name));
  v.output_head = head ? std::string(parent_of(head->name)) : std::string("lm_head");

  std::unordered_map<std::pair<std::string_view, std::string_view>, FusedGroup, PairHash>
      fused;  // (experts prefix, fused leaf) -> group
  for (const auto& t : ck.tensors) {
    const std::string& n = t.name;
    if (mtp && (starts_with(n, "mtp.") || n.find(".mtp.") != std::string::npos)) {
      drop("mtp.* (multi-token prediction head; transformers does not load it)", t);
      continue;
    }
    if (is_buffer(n)) {
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
    if (!is_weight) {
      if (ends_with(n, ".bias") || ends_with(n, "_bias")) continue;
      if (t.shape.size() == 3 && leaf_of(parent) == "experts" && t.shape[0] > kMaxExperts) {
        v.notes.push_back(
            fmt::format("{} claims {} experts, more than any model has ({} at the "
                        "most): not counted as experts",
                        n, t.shape[0], kMaxExperts));
      } else if (t.shape.size() == 3 && leaf_of(parent) == "experts") {
        // Already fused on disk (transformers 5 layout, gpt-oss).
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
    m.name = std::string(module);
    m.weight_numel = numel;
    if (t.shape.size() == 1) {
      m.kind = ModuleKind::kNorm;
    } else if (t.shape.size() == 2) {
      if (leaf == "gate" && expert_parents.count(parent)) {
        m.kind = ModuleKind::kRouter;
        m.out = t.shape[0];
        m.in = t.shape[1];
      } else if (is_embedding_leaf(leaf)) {
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
