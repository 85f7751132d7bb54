#include "plan/time.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "plan/names.h"

namespace sparkdoc::plan {

Hardware gb10_hardware() {
  return {"GB10", 57.5,
          "55-60 bf16 TFLOP/s measured on healthy GB10s (the data sheet's 125 is not reached)",
          186.0, "G5: 180-192 GB/s measured on GB10 (never the 273 GB/s spec)"};
}

Hardware h200_hardware() {
  return {"NVIDIA H200", 726.3, "8192^3 bf16 GEMMs measured on an H200 (bench/plan_step_time.py)",
          4027.8, "device copy measured on an H200 (bench/plan_step_time.py)"};
}

StepTime estimate_time(const ModelView& model, const LoraCount* lora, const TrainingSetup& w,
                       const Hardware& hw, const RunShape& run, const TimeConstants& k) {
  StepTime t;
  t.hardware = hw;
  t.grad_accum = std::max<uint64_t>(run.grad_accum, 1);
  if (hw.gemm_tflops <= 0 || hw.bandwidth_gbs <= 0) return t;
  t.known = true;
  const ModelConfig& c = model.config;
  const bool full = w.training == Training::kFull || lora == nullptr;
  const double tokens = static_cast<double>(w.seq) * static_cast<double>(w.batch);
  const uint64_t topk = c.experts_per_token ? c.experts_per_token : 2;

  // Forward FLOPs and bytes per token of the text tower's weights.
  double fwd_per_token = 0, weight_bytes = 0;
  double attention_width = 0;  // Σ over attention layers of q_proj's outputs
  std::set<int> layers;
  for (const auto& m : model.modules) {
    if (m.tower != Tower::kText) continue;
    if (m.layer >= 0) layers.insert(m.layer);
    const double in = static_cast<double>(m.in), out = static_cast<double>(m.out);
    if (m.kind == ModuleKind::kLinear) {
      fwd_per_token += 2 * in * out;
      weight_bytes += static_cast<double>(w.load_dtype_bytes) * in * out;
      if (detail::leaf_of(m.name) == "q_proj") attention_width += out;
    } else if (m.kind == ModuleKind::kExperts && m.experts > 0) {
      double e = static_cast<double>(m.experts);
      fwd_per_token += 2 * static_cast<double>(std::min<uint64_t>(topk, m.experts)) * in * out;
      weight_bytes += static_cast<double>(w.load_dtype_bytes) * e * in * out;
    }
  }
  double lora_per_token = 0;
  if (lora) {
    for (const auto& a : lora->adapted) {
      if (a.tower != Tower::kText) continue;
      double share = a.kind == ModuleKind::kExperts && a.experts > 0
                         ? static_cast<double>(std::min<uint64_t>(topk, a.experts))
                         : 1.0;
      lora_per_token += 2 * share * static_cast<double>(a.rank) * static_cast<double>(a.in + a.out);
    }
  }
  // Passes over the frozen weights: forward, input gradients, weight gradients (full only),
  // recompute (checkpointing).
  const double passes = 2 + (full ? 1 : 0) + (w.grad_ckpt ? 1 : 0);
  const double lora_passes = 3 + (w.grad_ckpt ? 1 : 0);
  const double attention_fwd = 2 * static_cast<double>(w.seq) * attention_width;
  t.matmul_flops = tokens * (fwd_per_token * passes + lora_per_token * lora_passes +
                             attention_fwd * (1 + 2.5 + (w.grad_ckpt ? 1 : 0)));
  t.weight_bytes_read = weight_bytes * (1 + 1 + (w.grad_ckpt ? 1 : 0));
  t.compute_s = t.matmul_flops / (k.gemm_efficiency * hw.gemm_tflops * 1e12);
  t.memory_s = t.weight_bytes_read / (hw.bandwidth_gbs * 1e9);
  t.host_s = static_cast<double>(layers.size()) * k.layer_overhead_s * (w.grad_ckpt ? 2 : 1);
  const double gpu = std::max(t.compute_s, t.memory_s);
  t.micro_batch_s = std::sqrt(gpu * gpu + t.host_s * t.host_s);
  t.step_s = t.micro_batch_s * static_cast<double>(t.grad_accum);
  if (run.steps) {
    t.steps = run.steps;
  } else if (run.samples) {
    uint64_t per_step = w.batch * t.grad_accum;
    t.steps = (run.samples + per_step - 1) / per_step * std::max<uint64_t>(run.epochs, 1);
  }
  t.run_s = t.step_s * static_cast<double>(t.steps);

  t.assumptions.push_back(
      fmt::format("matrix rate {:.0f} TFLOP/s ({}) at {:.0f} % efficiency "
                  "(fitted on H200 LoRA steps)",
                  hw.gemm_tflops, hw.gemm_source, 100 * k.gemm_efficiency));
  t.assumptions.push_back(
      fmt::format("memory {:.0f} GB/s ({})", hw.bandwidth_gbs, hw.bandwidth_source));
  t.assumptions.push_back(
      fmt::format("{:.1f} ms of kernel launches per decoder layer{} (fitted "
                  "on the H200's host)",
                  1e3 * k.layer_overhead_s, w.grad_ckpt ? ", twice with checkpointing" : ""));
  t.assumptions.push_back(fmt::format(
      "every micro-batch holds seq x batch = {} tokens (padding or packing to the full length)",
      static_cast<uint64_t>(tokens)));
  t.assumptions.push_back(
      "only matrix work, weight reads and launches are counted: kernels a "
      "stack lacks (a torch fallback for linear attention or Mamba, "
      "per-expert loops) make real steps slower");
  return t;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.1f} s", s);
  auto minutes = static_cast<uint64_t>(std::llround(s / 60));
  if (minutes < 60) return fmt::format("{} min", minutes);
  return fmt::format("{} h {} min", minutes / 60, minutes % 60);
}

}  // namespace sparkdoc::plan
