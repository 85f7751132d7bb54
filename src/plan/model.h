// The model as transformers 5 builds it, derived from the checkpoint's tensor names and shapes
// and config.json alone (no Python, no weights):
//   - parameters: the checkpoint's tensors less what the class never loads (Qwen3.5's mtp.*),
//     persistent buffers saved in checkpoints (inv_freq, position_ids, BatchNorm statistics,
//     e_score_correction_bias, and the families' own: model.cpp lists them), and the output
//     head when it is tied to the input embedding (named_parameters() counts it once; the
//     classes that never tie count both);
//   - modules a LoRA can wrap: nn.Linear (2-D `X.weight`), nn.Embedding (embedding names),
//     nn.ConvNd (`X.weight` of 3 or more dimensions), and the routed experts as transformers 5
//     keeps them: one 3-D parameter per projection (per-expert `experts.N.gate_proj` and
//     `up_proj` checkpoints are fused into gate_up_proj [E, 2I, H], as transformers 5 loads them)
//     or a 3-D weight of a module under `experts` (Aria, JetMoE);
//   - routers (`X.gate` beside `X.experts`, and `X.router` in the families whose router is not
//     nn.Linear) are transformers 5 TopKRouter modules holding a raw parameter, not nn.Linear:
//     all-linear does not take them and naming them is an error;
//   - modules whose weights are tied to others' (Zamba's shared block in each hybrid layer) are
//     modules with no parameters of their own, which PEFT still wraps;
//   - a checkpoint in a family's original layout, which transformers 5.17 renames, splits and
//     fuses at load (Granite MoE, HunYuan, DeepSeek-V4, Kimi-K2.5, ...: model.cpp's
//     kHubLayouts), is read as loaded.
// Where headers cannot tell (a 2-D weight of an embedding vs a linear, a router's class) the
// names of transformers 5.17's registered architectures decide, and model_type where names do
// not; model.cpp says which at each rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/config.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::plan {

enum class ModuleKind {
  kLinear,
  kEmbedding,
  kConv,
  kExperts,  // a 3-D routed-expert parameter [E, d1, d2]
  kRouter,
  kNorm,
  kOther,    // raw parameters (A_log, D, dt_bias, class embeddings, ...)
};
std::string_view module_kind_name(ModuleKind kind);

enum class Tower { kText, kVision };

struct Module {
  std::string name;   // module path ("model.layers.0.self_attn.q_proj"); for kExperts the
                      // parameter path ("model.layers.0.mlp.experts.gate_up_proj")
  ModuleKind kind = ModuleKind::kOther;
  uint64_t in = 0;    // Linear: in_features; Embedding: num_embeddings; Conv: in per group
  uint64_t out = 0;   // Linear: out_features; Embedding: embedding_dim; Conv: out channels
  uint64_t experts = 0;          // kExperts: E (d1 = out, d2 = in)
  uint64_t kernel_elems = 1;     // Conv: product of the kernel dimensions
  uint64_t weight_numel = 0;     // numel of the weight (0 for a tied output head)
  int layer = -1;                // decoder layer index (text tower), -1 outside layers
  Tower tower = Tower::kText;
  bool per_expert_on_disk = false;  // kExperts fused from per-expert checkpoint tensors
  bool operator==(const Module&) const = default;
};

struct DroppedGroup {
  std::string reason;       // "mtp.* (multi-token prediction head, not loaded by transformers)"
  uint64_t tensors = 0;
  uint64_t params = 0;
};

struct ModelView {
  ModelConfig config;
  uint64_t total_params = 0;       // named_parameters(), tied weights once
  uint64_t vision_params = 0;
  uint64_t weight_bytes = 0;       // at the checkpoint's dtypes
  uint64_t float_params = 0;       // parameters of floating dtype (cast by dtype= at load)
  uint64_t float_bytes = 0;        // their bytes at the checkpoint's dtypes
  uint64_t largest_tensor_bytes = 0;
  uint64_t largest_fused_bytes = 0;  // largest per-expert group fused at load (transient)
  bool tied = false;
  std::string embedding;           // the input embedding's module name
  std::string output_head;         // the output projection's module name ("lm_head")
  std::string output_embeddings;   // what get_output_embeddings() returns, which all-linear
                                   // leaves out; "" where the class returns None (BLIP)
  std::vector<Module> modules;     // sorted by name
  std::vector<std::string> parameter_paths;  // every kept parameter (container checks)
  std::vector<DroppedGroup> dropped;
  int num_layers = 0;              // text decoder layers seen
  std::vector<std::string> notes;
};

Result<ModelView> build_model_view(const safetensors::Checkpoint& ck, const ModelConfig& config);

}  // namespace sparkdoc::plan
