// The seeds' measured runs, planned: 001's Qwen3.5-35B-A3B (Unsloth, LoRA r=16, seq 2048 x batch
// 2, adamw_8bit, Unsloth checkpointing: a ~74 GB training footprint; seq 8192 ran out of memory
// in backward; the mmap load ran out of memory at 66 %) and 000's Nemotron-3-Nano-30B-A3B
// (Unsloth, r=32, seq 6144, checkpointing: ~75-80 GB at the training step).
#include <gtest/gtest.h>

#include <filesystem>

#include "plan_helpers.h"

namespace sparkdoc::plan {
namespace {

Plan seed_plan(const std::string& name, const sparkdoc::testing::ModelFixture& m,
               const PlanRequest& req) {
  return sparkdoc::testing::plan_fixture(name, m, req, 14);
}

PlanRequest seed001(uint64_t seq) {
  PlanRequest req;
  req.lora.rank = 16;
  req.lora.framework = Framework::kUnsloth;
  req.lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  req.setup.optimizer = Optimizer::kAdamW8bit;
  req.setup.seq = seq;
  req.setup.batch = 2;
  req.setup.grad_ckpt = true;
  req.setup.cuda_context_bytes = default_constants().gb10_cuda_context_bytes;
  req.cuda_context_source = "GB10";
  return req;
}

double gib(uint64_t bytes) {
  return static_cast<double>(bytes) / (uint64_t{1} << 30);
}

// 001's "total training footprint (Unsloth) ~74 GB" is read as Unsloth's own printout, torch's
// max_memory_reserved in GiB (its notebooks print reserved bytes / 1024^3 as "GB"), so it is
// compared with peak_reserved: the budget less the CUDA context.
TEST(PlanSeeds, Qwen35At001sConfigurationMatchesItsFootprint) {
  auto p = seed_plan("qwen35_001", sparkdoc::testing::qwen35_moe(false), seed001(2048));
  EXPECT_EQ(p.trainable, 931'102'720u);  // r=16: half of 001's r=32 count less the shared expert
  EXPECT_NEAR(gib(p.budget.peak_reserved), 74.0, 7.4) << render_plan_text(p);
  EXPECT_EQ(p.budget.cuda_context, 8'000'000'000u);
  // ~119 GB of physical memory shared by the page cache and CUDA (001).
  judge_fit(p, {119'000'000'000, "001"});
  EXPECT_TRUE(p.fit.training_fits);
  // The mmap load does not fit (001: out of memory at 66 % of the load, ~119 of 134 GB) ...
  EXPECT_FALSE(p.fit.load_fits);
  EXPECT_FALSE(p.fit.fits);
  EXPECT_GT(p.budget.load_peak_mmap, 134'000'000'000u);
  std::string text = render_plan_text(p);
  EXPECT_NE(text.find("DOES NOT FIT: the load"), std::string::npos) << text;
  EXPECT_NE(text.find("--loader sparkdoc"), std::string::npos);
  // ... and 001's eager loader's ~72 GB peak (5 GB of shard + 67 GB of tensors) does.
  auto eager = seed001(2048);
  eager.setup.loader = LoadMethod::kSparkdoc;
  auto q = seed_plan("qwen35_001_loader", sparkdoc::testing::qwen35_moe(false), eager);
  judge_fit(q, {119'000'000'000, "001"});
  EXPECT_TRUE(q.fit.fits);
  EXPECT_NEAR(static_cast<double>(q.budget.load_peak - q.budget.cuda_context) / 1e9, 72.0, 7.2);
}

// 001 saw seq 8192 run out of memory in the backward pass. With SDPA (Unsloth 2026.3's choice for
// Qwen3.5) and its fused loss compiled this model does not reproduce it: every term measured on
// the H200 grows linearly with seq, and 8192 needs more than 2048 but less than a GB10 has.
// Eager attention, the usual way round flash-attn on sm_121, does: its seq^2 scores (16 B each
// in the layer being recomputed, measured) make 8192 not fit while 2048 is unchanged. Which
// attention 001 ran is not said.
TEST(PlanSeeds, Qwen35At001sLongSequence) {
  auto at2k = seed_plan("qwen35_001_2k", sparkdoc::testing::qwen35_moe(false), seed001(2048));
  auto at8k = seed_plan("qwen35_001_8k", sparkdoc::testing::qwen35_moe(false), seed001(8192));
  EXPECT_GT(at8k.budget.need, at2k.budget.need + 12'000'000'000u);
  judge_fit(at8k, {119'000'000'000, "001"});
  EXPECT_TRUE(at8k.fit.training_fits) << render_plan_text(at8k);

  auto eager = seed001(8192);
  eager.setup.attention = Attention::kEager;
  auto e = seed_plan("qwen35_001_8k_eager", sparkdoc::testing::qwen35_moe(false), eager);
  // One layer's 2 x 16 x 8192^2 scores at 16 B each while it is recomputed.
  EXPECT_EQ(e.budget.activations.attention_scores, uint64_t{16} * 2 * 16 * 8192 * 8192);
  judge_fit(e, {119'000'000'000, "001"});
  EXPECT_FALSE(e.fit.training_fits) << render_plan_text(e);
  EXPECT_GT(e.budget.need, 128'800'000'000u);  // beyond a whole healthy GB10 as well
  std::string text = render_plan_text(e);
  EXPECT_NE(text.find("attention scores"), std::string::npos) << text;

  auto eager2k = seed001(2048);
  eager2k.setup.attention = Attention::kEager;
  auto e2 = seed_plan("qwen35_001_2k_eager", sparkdoc::testing::qwen35_moe(false), eager2k);
  EXPECT_NEAR(gib(e2.budget.peak_reserved), 74.0, 7.4) << render_plan_text(e2);
  judge_fit(e2, {119'000'000'000, "001"});
  EXPECT_TRUE(e2.fit.training_fits);
}

// 001's run: 271 samples, 3 epochs, batch 2 x 4 accumulated: 102 steps, which took 2 h 24 min on
// a GB10. The estimate counts matrix work, weight reads and launches only and says 21 min: the
// measured run was about 7 times slower (Qwen3.5's Gated DeltaNet layers and routed experts
// without fused kernels on sm_121 are not modelled); the plan prints its assumptions.
TEST(PlanSeeds, Qwen35RunTimeOnGb10) {
  auto req = seed001(2048);
  req.hardware = gb10_hardware();
  req.run = {271, 3, 4, 0};
  auto p = seed_plan("qwen35_001_time", sparkdoc::testing::qwen35_moe(false), req);
  ASSERT_TRUE(p.time.known);
  EXPECT_EQ(p.time.steps, 102u);
  EXPECT_EQ(p.time.grad_accum, 4u);
  EXPECT_NEAR(p.time.run_s / 60, 21, 3);
  EXPECT_LT(p.time.run_s, 2 * 3600 + 24 * 60);
  // Active parameters only: 8 of 256 experts per token.
  EXPECT_LT(p.time.matmul_flops, 6 * 4e9 * 4096 * 1.2);
  EXPECT_GT(p.time.memory_s, 1.0);  // 70 GB of weights read three times at 186 GB/s
  std::string text = render_plan_text(p);
  EXPECT_NE(text.find("102 steps: "), std::string::npos) << text;
  EXPECT_NE(text.find("never the 273 GB/s spec"), std::string::npos);
  EXPECT_EQ(format_duration(2 * 3600 + 24 * 60), "2 h 24 min");
  EXPECT_EQ(format_duration(42), "42.0 s");
  // Without hardware figures there is no estimate.
  auto none = seed_plan("qwen35_001_notime", sparkdoc::testing::qwen35_moe(false), seed001(2048));
  EXPECT_FALSE(none.time.known);
}

TEST(PlanSeeds, QloraLoadsWorseThanBf16OnUnifiedMemory) {
  auto bf16 = seed_plan("qwen35_bf16_load", sparkdoc::testing::qwen35_moe(false), seed001(2048));
  auto qreq = seed001(2048);
  qreq.training = Training::kQlora;
  auto q = seed_plan("qwen35_qlora_load", sparkdoc::testing::qwen35_moe(false), qreq);
  EXPECT_LT(q.budget.weights, bf16.budget.weights);
  // 001: QLoRA ran out of memory earlier in the load than bf16 did.
  EXPECT_GT(q.budget.load_peak_mmap, bf16.budget.load_peak_mmap);
  EXPECT_GT(q.budget.qlora_load_transient, 0u);
}

// 000 §10: "Total at training step (Unsloth) ~75-80 GB" for r=32 on every layer with the 128
// experts, seq 6144, checkpointing, the ~8 GB context included; Unsloth's notebook optimizer
// (adamw_8bit). 000's base "~60 GB" for 31.6 B bf16 parameters reads as GiB.
TEST(PlanSeeds, NemotronAt000sConfigurationMatchesItsBudget) {
  PlanRequest req;
  req.lora.rank = 32;
  req.lora.framework = Framework::kUnsloth;
  req.lora.targets = {"q_proj",  "k_proj",   "v_proj",  "o_proj",
                      "in_proj", "out_proj", "up_proj", "down_proj"};
  req.setup.seq = 6144;
  req.setup.batch = 1;
  req.setup.grad_ckpt = true;
  req.setup.optimizer = Optimizer::kAdamW8bit;
  req.setup.cuda_context_bytes = default_constants().gb10_cuda_context_bytes;
  req.cuda_context_source = "GB10";
  auto p = seed_plan("nemotron_000", sparkdoc::testing::nemotron_h(false), req);
  EXPECT_GE(gib(p.budget.need), 75.0 * 0.9) << render_plan_text(p);
  EXPECT_LE(gib(p.budget.need), 80.0 * 1.1) << render_plan_text(p);
  // 000: available 130.7 GB - 8 GB context ~ 122 GB; trains comfortably.
  judge_fit(p, {122'000'000'000, "000"});
  EXPECT_TRUE(p.fit.training_fits);
}

}  // namespace
}  // namespace sparkdoc::plan
