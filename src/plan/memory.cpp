#include "plan/memory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "core/strings.h"
#include "plan/names.h"

namespace sparkdoc::plan {
namespace {

using detail::leaf_of;
using detail::parent_of;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// bitsandbytes Optimizer2State: fp32 states under min_8bit_size (4096), else uint8 states and one
// fp32 absmax per 256-element block for each of the two states.
uint64_t adam8bit_bytes(uint64_t n) {
  if (n < 4096) return 8 * n;
  return 2 * n + 8 * ceil_div(n, 256);
}

// NF4 with double quantisation: 4 bits a weight, an 8-bit absmax per 64 weights, an fp32 absmax
// per 256 of those, and the 256-entry code tables (negligible).
uint64_t nf4_bytes(uint64_t n) {
  uint64_t blocks = ceil_div(n, 64);
  return ceil_div(n, 2) + blocks + 4 * ceil_div(blocks, 256);
}

// The LoRA weight tensors of one adapted module, as (elements) pairs: lora_A then lora_B.
std::vector<uint64_t> lora_tensors(const AdaptedModule& a, Framework f) {
  const uint64_t r = a.rank;
  switch (a.kind) {
    case ModuleKind::kExperts:
      if (f == Framework::kUnsloth) {
        std::vector<uint64_t> out;
        for (uint64_t e = 0; e < a.experts; ++e) {
          out.push_back(r * a.in);
          out.push_back(r * a.out);
        }
        return out;
      }
      return {r * a.experts * a.in, r * a.experts * a.out};
    case ModuleKind::kConv:
      return {a.params - a.out * r, a.out * r};
    default:
      return {r * a.in, r * a.out};
  }
}

struct LayerParts {
  std::map<std::string, std::vector<const Module*>, std::less<>> by_parent;
  std::vector<const AdaptedModule*> adapted;
};

const Module* find_leaf(const std::vector<const Module*>& ms, std::string_view leaf) {
  for (const auto* m : ms) {
    if (leaf_of(m->name) == leaf) return m;
  }
  return nullptr;
}

bool is_output_projection(std::string_view leaf) {
  return leaf == "o_proj" || leaf == "out_proj" || leaf == "down_proj" || leaf == "dense" ||
         leaf == "c_proj" || leaf == "fc2" || leaf == "w2" || leaf == "proj" ||
         leaf == "linear_fc2" || leaf == "dense_4h_to_h";
}

// The value width (out_proj's input) of a Gated DeltaNet layer, 0 for any other layer.
uint64_t gated_deltanet_width(const LayerParts& parts) {
  for (const auto& [parent, ms] : parts.by_parent) {
    std::vector<const Module*> linears;
    for (const auto* m : ms) {
      if (m->kind == ModuleKind::kLinear) linears.push_back(m);
    }
    const Module* out_proj = find_leaf(linears, "out_proj");
    if (find_leaf(linears, "in_proj_qkv") && out_proj) return out_proj->in;
  }
  return 0;
}

// Saved bytes per token of one decoder layer (bf16 activations, fp32 norm inputs), from the
// shapes of its modules. See the header for the sources.
uint64_t layer_bytes_per_token(const LayerParts& parts, const ModelConfig& c, bool full,
                               uint64_t rank, Framework framework) {
  uint64_t bytes = 0;
  uint64_t heads = std::max<uint64_t>(c.num_attention_heads, 1);
  uint64_t topk = c.experts_per_token ? c.experts_per_token : 2;
  for (const auto& [parent, ms] : parts.by_parent) {
    std::vector<const Module*> linears, experts, norms, convs;
    const Module* router = nullptr;
    for (const auto* m : ms) {
      switch (m->kind) {
        case ModuleKind::kLinear: linears.push_back(m); break;
        case ModuleKind::kExperts: experts.push_back(m); break;
        case ModuleKind::kNorm: norms.push_back(m); break;
        case ModuleKind::kConv: convs.push_back(m); break;
        case ModuleKind::kRouter: router = m; break;
        default: break;
      }
    }
    const Module* q = find_leaf(linears, "q_proj");
    const Module* in_proj = find_leaf(linears, "in_proj");
    const Module* in_qkv = find_leaf(linears, "in_proj_qkv");
    const Module* out_proj = find_leaf(linears, "out_proj");
    for (const auto* n : norms) {
      std::string_view leaf = leaf_of(n->name);
      if (leaf == "q_norm" && q) bytes += 4 * q->out;
      else if (leaf == "k_norm") {
        const Module* k = find_leaf(linears, "k_proj");
        bytes += 4 * (k ? k->out : n->weight_numel);
      } else if (!in_proj && !in_qkv) {
        bytes += 4 * n->weight_numel;
      }
    }
    if (!experts.empty()) {
      // Routed experts, top-k per token: dispatched inputs, projection outputs, activation.
      for (const auto* e : experts) {
        bytes += topk * 2 * (e->in + e->out);
        if (ends_with(e->name, "gate_up_proj")) bytes += topk * 2 * (e->out / 2);
        else if (ends_with(e->name, "up_proj")) bytes += topk * 2 * e->out;
      }
      bytes += topk * 2 * c.hidden_size;  // weighted expert outputs
      if (router) bytes += 8 * router->out;  // logits and softmax, fp32
      continue;
    }
    if (router) bytes += 8 * router->out;
    if (in_proj && out_proj) {
      // Mamba-2 fused scan: zxbcdt, the conv output, out_x and the gated norm (reference §5.3).
      uint64_t d_inner = out_proj->in;
      uint64_t conv = convs.empty() ? 0 : convs.front()->out;
      bytes += 2 * in_proj->out + 2 * conv + 6 * d_inner + 2 * in_proj->in;
      if (full) bytes += 2 * d_inner;
      continue;
    }
    if (in_qkv && out_proj) {
      // Gated DeltaNet: projections, conv output, normalised q/k, core output, gated norm.
      uint64_t outs = 0;
      for (const auto* m : linears) {
        if (m != out_proj) outs += m->out;
      }
      uint64_t conv = convs.empty() ? in_qkv->out : convs.front()->out;
      bytes += 2 * outs + 2 * conv + 2 * in_qkv->out + 6 * out_proj->in + 2 * in_qkv->in;
      if (full) bytes += 2 * out_proj->in;
      continue;
    }
    const Module* k = find_leaf(linears, "k_proj");
    const Module* v = find_leaf(linears, "v_proj");
    const Module* o = find_leaf(linears, "o_proj");
    if (q && k && v) {
      // SDPA / flash attention: q, k, v after rotary, the output and the fp32 log-sum-exp.
      bytes += 2 * (q->out + k->out + v->out) + 4 * heads;
      if (o) bytes += 2 * o->in;
      if (full) bytes += 2 * q->in;
      continue;
    }
    // An MLP (gated or not) or any other group of projections.
    // Gated or not, the up-projections' outputs are saved (by the activation and the product),
    // and so is the activation's output that feeds the down projection.
    uint64_t up_outs = 0, down_in = 0, first_in = 0;
    for (const auto* m : linears) {
      if (is_output_projection(leaf_of(m->name))) {
        down_in = std::max(down_in, m->in);
      } else {
        up_outs += m->out;
        first_in = std::max(first_in, m->in);
      }
    }
    if (up_outs == 0 && down_in == 0) continue;
    bytes += 2 * up_outs + 2 * down_in;
    if (full) bytes += 2 * first_in + 2 * down_in;
  }
  // LoRA: each adapted module keeps a bf16 copy of its input for lora_A's gradient and lora_A's
  // output for lora_B's.
  for (const auto* a : parts.adapted) {
    if (a->kind == ModuleKind::kExperts) {
      bytes += topk * 2 * (a->in + (framework == Framework::kUnsloth ? rank : 0));
      continue;
    }
    bytes += 2 * a->in + 2 * rank;
  }
  return bytes;
}

}  // namespace

std::string_view training_name(Training t) {
  switch (t) {
    case Training::kFull: return "full";
    case Training::kLora: return "lora";
    case Training::kQlora: return "qlora";
  }
  return "?";
}
std::string_view optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kAdamW8bit: return "adamw_8bit";
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kAdafactor: return "adafactor";
  }
  return "?";
}
std::optional<Optimizer> parse_optimizer(std::string_view s) {
  if (s == "adamw" || s == "adamw_torch" || s == "adamw_torch_fused") return Optimizer::kAdamW;
  if (s == "adamw_8bit" || s == "adamw_bnb_8bit" || s == "paged_adamw_8bit") {
    return Optimizer::kAdamW8bit;
  }
  if (s == "sgd") return Optimizer::kSgd;
  if (s == "adafactor") return Optimizer::kAdafactor;
  return std::nullopt;
}
std::string_view load_method_name(LoadMethod l) {
  return l == LoadMethod::kMmap ? "mmap" : "sparkdoc";
}
std::string_view attention_name(Attention a) {
  return a == Attention::kSdpa ? "sdpa" : "eager";
}
std::string_view linear_attention_name(LinearAttention a) {
  return a == LinearAttention::kTorch ? "torch" : "fla";
}

Constants default_constants() { return Constants{}; }

Budget compute_budget(const ModelView& model, const LoraCount* lora, const TrainingSetup& w,
                      const Constants& k) {
  Budget b;
  const ModelConfig& c = model.config;
  const bool full = w.training == Training::kFull || lora == nullptr;
  const uint64_t rank = lora ? lora->rank : 0;

  // Weights at the load dtype; pre-quantised checkpoints keep their bytes.
  uint64_t nonfloat_bytes = model.weight_bytes - model.float_bytes;
  uint64_t load_bytes = c.quant_method.empty()
                            ? model.float_params * w.load_dtype_bytes + nonfloat_bytes
                            : model.weight_bytes;
  if (w.training == Training::kQlora && c.quant_method.empty()) {
    uint64_t linear_numel = 0, nf4 = 0;
    for (const auto& m : model.modules) {
      if (m.kind != ModuleKind::kLinear || m.name == model.output_head || m.weight_numel == 0) {
        continue;
      }
      linear_numel += m.weight_numel;
      nf4 += nf4_bytes(m.weight_numel);
    }
    load_bytes = (model.float_params - linear_numel) * w.load_dtype_bytes + nonfloat_bytes + nf4;
  }
  b.weights = load_bytes;

  uint64_t trainable = full ? model.total_params : lora->trainable;
  uint64_t param_bytes = full ? w.load_dtype_bytes : 4;  // LoRA adapters are fp32
  if (!full) {
    b.adapter = 4 * trainable;
    // adapter_model.safetensors: fp32 tensors named "base_model.model.<module>.lora_A.weight"
    // (17 + 14 characters around the module) and about 60 bytes of dtype, shape and offsets each.
    uint64_t header = 0;
    for (const auto& a : lora->adapted) {
      header += lora_tensors(a, w.framework).size() * (a.name.size() + 17 + 14 + 60);
    }
    b.adapter_file = 8 + header + 4 * trainable;
  }
  b.gradients = param_bytes * trainable;

  // Optimizer states.
  switch (w.optimizer) {
    case Optimizer::kAdamW: b.optimizer = 2 * param_bytes * trainable; break;
    case Optimizer::kSgd: b.optimizer = 0; break;
    case Optimizer::kAdamW8bit:
      if (full) {
        uint64_t embed = 0;
        for (const auto& m : model.modules) {
          if (m.kind == ModuleKind::kEmbedding) embed += m.weight_numel;
        }
        b.optimizer = adam8bit_bytes(trainable - embed) + 8 * embed;
      } else {
        for (const auto& a : lora->adapted) {
          for (uint64_t n : lora_tensors(a, w.framework)) b.optimizer += adam8bit_bytes(n);
        }
      }
      break;
    case Optimizer::kAdafactor:
      if (full) {
        for (const auto& m : model.modules) {
          if (m.weight_numel == 0) continue;
          if (m.kind == ModuleKind::kLinear || m.kind == ModuleKind::kEmbedding) {
            b.optimizer += 4 * (m.in + m.out);
          } else {
            b.optimizer += 4 * m.weight_numel;
          }
        }
      } else {
        for (const auto& a : lora->adapted) b.optimizer += 4 * (2 * rank + a.in + a.out);
      }
      break;
  }
  // foreach AdamW's temporaries during step(): about one copy of the trainable parameters.
  b.step_transient = w.optimizer == Optimizer::kAdamW ? param_bytes * trainable : 0;

  // Activations.
  std::map<int, LayerParts> layers;
  for (const auto& m : model.modules) {
    if (m.tower != Tower::kText || m.layer < 0) continue;
    layers[m.layer].by_parent[std::string(parent_of(m.name))].push_back(&m);
  }
  if (lora) {
    for (const auto& a : lora->adapted) {
      if (a.tower == Tower::kText && a.layer >= 0) layers[a.layer].adapted.push_back(&a);
    }
  }
  Activations& act = b.activations;
  uint64_t expert_layer_elems_max = 0, expert_elems_total = 0;
  uint64_t attention_layers = 0;
  // The torch fallback's extra for Gated DeltaNet, kept apart so that its share can be shown.
  uint64_t fallback_saved = 0, fallback_backward = 0, max_layer_kernels = 0;
  for (const auto& [i, parts] : layers) {
    for (const auto& [parent, ms] : parts.by_parent) {
      if (find_leaf(ms, "q_proj") && find_leaf(ms, "k_proj")) ++attention_layers;
    }
    auto per = static_cast<uint64_t>(
        std::llround(static_cast<double>(layer_bytes_per_token(parts, c, full, rank,
                                                                w.framework)) *
                     k.layer_scale));
    uint64_t width =
        w.linear_attention == LinearAttention::kTorch ? gated_deltanet_width(parts) : 0;
    auto saved =
        static_cast<uint64_t>(std::llround(k.gdn_fallback_saved * static_cast<double>(width)));
    auto backward =
        static_cast<uint64_t>(std::llround(k.gdn_fallback_backward * static_cast<double>(width)));
    fallback_saved += saved;
    fallback_backward = std::max(fallback_backward, backward);
    act.per_token_layers += per + saved;
    act.per_token_max_layer = std::max(act.per_token_max_layer, per + saved + backward);
    max_layer_kernels = std::max(max_layer_kernels, per);
    uint64_t elems = 0;
    for (const auto* a : parts.adapted) {
      if (a->kind == ModuleKind::kExperts) elems += a->experts * a->in * a->out;
    }
    expert_layer_elems_max = std::max(expert_layer_elems_max, elems);
    expert_elems_total += elems;
  }
  uint64_t hidden = c.hidden_size;
  if (hidden == 0) {
    for (const auto& m : model.modules) {
      if (m.name == model.embedding) hidden = m.out;
    }
  }
  uint64_t vocab = 0;
  for (const auto& m : model.modules) {
    if (m.name == model.output_head) vocab = m.out;
  }
  if (vocab == 0) vocab = c.vocab_size;
  uint64_t tokens = w.seq * w.batch;
  act.per_token_checkpoint = static_cast<uint64_t>(layers.size()) * 2 * hidden;
  // Unsloth's fused cross-entropy, compiled: the bf16 logits and their gradient (4.0 B per
  // logit on the H200), in one chunk: unsloth-zoo 2026.3 sizes chunks from half of
  // cudaMemGetInfo's free memory, which on a GB10 gives one for any batch that fits.
  double loss_per_logit = w.framework == Framework::kUnsloth ? 4.0 : k.loss_bytes_per_logit;
  act.loss_head = static_cast<uint64_t>(
      std::llround(loss_per_logit * static_cast<double>(tokens) * static_cast<double>(vocab)));
  // PEFT's ParamWrapper materialises ΔW (fp32), its bf16 cast and W + ΔW for every wrapped
  // expert parameter on each forward; W + ΔW stays saved for backward (reference §5.4).
  if (lora && w.framework == Framework::kPeft && expert_elems_total > 0) {
    act.expert_delta = 8 * expert_layer_elems_max;
  }
  // Eager attention: softmax(QK^T) in fp32 then cast, so each attention layer saves the fp32
  // softmax and its bf16 cast (6 B per score), and in backward the layer being computed holds
  // the probabilities' gradient, its fp32 cast and the softmax's gradient (10 B more). Both
  // measured on the H200 (Qwen3.5's attention layers, seq 2048-8192: 6.0 and 10.1 B per score).
  // b·heads·s² scores per layer.
  uint64_t scores = 0, saved_scores = 0;
  if (w.attention == Attention::kEager && attention_layers > 0) {
    uint64_t per_layer = std::max<uint64_t>(c.num_attention_heads, 1) * w.seq * tokens;
    scores = 10 * per_layer;
    saved_scores = 6 * per_layer;
  }
  uint64_t hidden_grad = tokens * 2 * hidden * 2;
  auto without_ckpt = [&](uint64_t layers_sum, uint64_t backward) {
    return tokens * (layers_sum + backward) + act.loss_head +
           (act.expert_delta ? 2 * expert_elems_total + act.expert_delta : 0) +
           attention_layers * saved_scores + scores;
  };
  auto with_ckpt = [&](uint64_t max_layer) {
    return tokens * act.per_token_checkpoint +
           std::max(act.loss_head, tokens * max_layer + hidden_grad + 2 * act.expert_delta +
                                       saved_scores + scores);
  };
  act.without_ckpt = without_ckpt(act.per_token_layers, fallback_backward);
  act.with_ckpt = with_ckpt(act.per_token_max_layer);
  b.activations_used = w.grad_ckpt ? act.with_ckpt : act.without_ckpt;
  act.linear_fallback =
      b.activations_used - (w.grad_ckpt ? with_ckpt(max_layer_kernels)
                                        : without_ckpt(act.per_token_layers - fallback_saved, 0));
  // Checkpointed, one layer's scores are alive at a time; otherwise every layer keeps its own.
  act.attention_scores =
      w.grad_ckpt ? saved_scores + scores : attention_layers * saved_scores + scores;

  uint64_t fixed = b.weights + b.adapter + b.optimizer;
  uint64_t during_backward = b.activations_used + (full ? 0 : b.gradients);
  uint64_t at_step = b.gradients + b.step_transient;
  uint64_t dynamic = std::max(during_backward, at_step);
  b.peak_allocated = fixed + dynamic;
  b.allocator_slack =
      static_cast<uint64_t>(std::llround(static_cast<double>(dynamic) * k.allocator_slack));
  b.peak_reserved = b.peak_allocated + b.allocator_slack;
  b.cuda_context = w.cuda_context_bytes ? w.cuda_context_bytes : k.cuda_context_bytes;
  b.need = b.peak_reserved + b.cuda_context;

  b.checkpoint_bytes = 0;
  // mmap: every shard read stays in the page cache beside the weights made from it (001: out of
  // memory at 66 % of loading), plus the largest per-expert group being fused.
  b.load_peak_mmap = b.weights + model.weight_bytes + model.largest_fused_bytes + b.cuda_context;
  b.load_peak_sparkdoc = b.weights + k.sparkdoc_staging_bytes + b.cuda_context;
  if (w.training == Training::kQlora) {
    // bitsandbytes quantises each weight from a copy in the load dtype, and 4-bit loading turns
    // on device_map="auto", whose CPU-placed weights stay in the load dtype: on unified memory
    // the same pool. So QLoRA's mmap peak is at least bf16 LoRA's, plus the tensor being
    // quantised (001: QLoRA ran out of memory earlier than bf16, at ~4 % of the load).
    uint64_t unquantised = model.float_params * w.load_dtype_bytes + nonfloat_bytes;
    b.qlora_load_transient = unquantised > b.weights ? unquantised - b.weights : 0;
    b.load_peak_mmap += b.qlora_load_transient + model.largest_tensor_bytes;
    b.load_peak_sparkdoc += model.largest_tensor_bytes;
  }
  b.load_peak = w.loader == LoadMethod::kMmap ? b.load_peak_mmap : b.load_peak_sparkdoc;
  return b;
}

}  // namespace sparkdoc::plan
