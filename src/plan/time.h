// How long a step and the whole run take: an estimate from the model's shapes, the GPU's matrix
// rate and its memory bandwidth, with every assumption it rests on printed beside it.
//
// One micro-batch of T = seq x batch tokens:
//   - matrix work: 2 FLOPs per weight per token forward for each nn.Linear of the text tower (the
//     output head included, tied or not) and for the routed experts a token is sent to (top-k of
//     E), once forward, once for the input gradients, once more for the weight gradients of full
//     fine-tuning, once more to recompute with gradient checkpointing; LoRA's own r x (in + out)
//     per adapted module likewise; causal attention 2 x seq x heads x head_dim per token and
//     layer forward, 2.5 times that backward;
//   - weight reads: every weight once per pass (a routed expert is read when any token of the
//     micro-batch goes to it, which at thousands of tokens is all of them);
//   - the GPU's time is the larger of the matrix work at an efficiency fitted on the H200 and the
//     weight reads at the memory bandwidth;
//   - the host's time: launching each layer's kernels (fitted on the H200's host), twice per layer
//     with checkpointing; the two overlap, and a step takes sqrt(gpu^2 + host^2).
// A step is grad_accum micro-batches; the run is steps x step (steps from the dataset's samples,
// epochs, batch and accumulation, or given).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/lora.h"
#include "plan/memory.h"
#include "plan/model.h"

namespace sparkdoc::plan {

// What the GPU can do, and where each figure comes from.
struct Hardware {
  std::string name;        // "GB10", "NVIDIA H200"
  double gemm_tflops = 0;  // dense bf16 matrix rate, TFLOP/s
  std::string gemm_source;
  double bandwidth_gbs = 0;  // memory bandwidth, GB/s (a copy's read + write bytes)
  std::string bandwidth_source;
};

// GB10: 55-60 bf16 TFLOP/s measured on healthy Sparks (not the 125 of the data sheet;
// reference field-2026.md), 180-192 GB/s measured (G5; never the 273 GB/s spec).
Hardware gb10_hardware();
// The H200 of the GPU machine: 726 TFLOP/s (8192^3 bf16 GEMMs) and 4028 GB/s (device copy),
// bench/plan_step_time.py on 2026-12-01.
Hardware h200_hardware();

struct RunShape {
  uint64_t samples = 0;  // training examples (0: unknown)
  uint64_t epochs = 1;
  uint64_t grad_accum = 1;  // micro-batches per optimizer step
  uint64_t steps = 0;       // given directly (0: from samples)
};

// Fitted on 22 LoRA steps of six dense shapes on two H200 machines (bench/plan_step_time.py,
// bench/plan_step_time_compare.py; docs/BENCHMARKS.md): worst 26 %, mean 14 %.
struct TimeConstants {
  double gemm_efficiency = 0.46;     // achieved fraction of the GEMM rate in a training step
  double layer_overhead_s = 0.0066;  // host time to launch one decoder layer's kernels (fwd + bwd)
};

struct StepTime {
  bool known = false;  // hardware figures were given
  Hardware hardware;
  double matmul_flops = 0;       // per micro-batch
  double weight_bytes_read = 0;  // per micro-batch
  double compute_s = 0;          // matrix work at the fitted efficiency
  double memory_s = 0;           // weight reads at the bandwidth
  double host_s = 0;             // kernel launches
  double micro_batch_s = 0;
  double step_s = 0;  // grad_accum micro-batches
  uint64_t grad_accum = 1;
  uint64_t steps = 0;  // 0: unknown (no samples or steps given)
  double run_s = 0;
  std::vector<std::string> assumptions;
};

StepTime estimate_time(const ModelView& model, const LoraCount* lora, const TrainingSetup& setup,
                       const Hardware& hardware, const RunShape& run,
                       const TimeConstants& k = TimeConstants{});

// "2 h 24 min", "18 min", "42 s".
std::string format_duration(double seconds);

}  // namespace sparkdoc::plan
