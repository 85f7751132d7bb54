// The memory formulas against the reference's worked numbers (memory-planning.md §3, §4).
#include <gtest/gtest.h>

#include <filesystem>

#include "plan_helpers.h"

namespace sparkdoc::plan {
namespace {

Plan make(const std::string& name, const sparkdoc::testing::ModelFixture& m,
          const PlanRequest& req) {
  return sparkdoc::testing::plan_fixture(name, m, req, 2);
}

TEST(PlanMemory, AdamW8bitFollowsTheBlockFormula) {
  PlanRequest req;
  req.lora.rank = 32;
  req.lora.experts = true;
  req.setup.optimizer = Optimizer::kAdamW8bit;
  auto p = make("qwen35_8bit", sparkdoc::testing::qwen35_moe(false), req);
  // Every LoRA tensor of this model is a multiple of 256 elements: 2n + 8n/256 exactly.
  EXPECT_EQ(p.budget.optimizer, 3'782'604'800u);
  EXPECT_EQ(p.budget.gradients, uint64_t{4} * 1'862'205'440u);
  EXPECT_EQ(p.budget.adapter, uint64_t{4} * 1'862'205'440u);
  // bf16 weights of the loaded class: 2 bytes per parameter (70.214 GB).
  EXPECT_EQ(p.budget.weights, uint64_t{2} * 35'107'181'936u);
  req.setup.optimizer = Optimizer::kAdamW;
  auto adam = make("qwen35_adamw", sparkdoc::testing::qwen35_moe(false), req);
  EXPECT_EQ(adam.budget.optimizer, uint64_t{8} * 1'862'205'440u);
}

TEST(PlanMemory, NemotronNotebookAfterLoad) {
  // Unsloth's notebook: 59.752 GiB reserved after load + PEFT (bf16 base + fp32 LoRA r=8 with
  // experts, reference §2.3).
  PlanRequest req;
  req.lora.rank = 8;
  req.lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "out_proj", "up_proj",
                      "down_proj"};
  req.lora.framework = Framework::kUnsloth;
  auto p = make("nemotron_mem", sparkdoc::testing::nemotron_h(false), req);
  double gib = static_cast<double>(p.budget.weights + p.budget.adapter) / (1ull << 30);
  EXPECT_NEAR(gib, 59.752, 0.2);
  // r=32 with experts: a 3.54 GB adapter file.
  req.lora.rank = 32;
  auto r32 = make("nemotron_mem32", sparkdoc::testing::nemotron_h(false), req);
  EXPECT_NEAR(static_cast<double>(r32.budget.adapter_file) / 1e9, 3.54, 0.01);
}

TEST(PlanMemory, CheckpointingAndLongerSequencesBehave) {
  PlanRequest req;
  req.lora.rank = 16;
  req.setup.seq = 2048;
  req.setup.batch = 2;
  auto base = make("qwen3_act", sparkdoc::testing::qwen3_moe(), req);
  const auto& a = base.budget.activations;
  EXPECT_LT(a.with_ckpt, a.without_ckpt);
  // The loss head: bytes per logit × tokens × vocabulary.
  EXPECT_EQ(a.loss_head, static_cast<uint64_t>(default_constants().loss_bytes_per_logit * 4096 *
                                               151936));
  req.setup.seq = 4096;
  auto longer = make("qwen3_act2", sparkdoc::testing::qwen3_moe(), req);
  EXPECT_GT(longer.budget.activations.without_ckpt, a.without_ckpt);
  EXPECT_GT(longer.budget.need, base.budget.need);
  // Fit: the largest seq×batch is monotone in what is available.
  Plan small = base, large = base;
  judge_fit(small, {200'000'000'000, "test"});
  judge_fit(large, {300'000'000'000, "test"});
  EXPECT_TRUE(small.fit.known);
  EXPECT_LT(small.fit.max_tokens, large.fit.max_tokens);
  EXPECT_EQ(small.fit.max_seq_at_batch, small.fit.max_tokens / 2);
  Plan none = base;
  judge_fit(none, {1'000'000'000, "test"});
  EXPECT_FALSE(none.fit.fits);
  EXPECT_EQ(none.fit.max_tokens, 0u);
}

// transformers' torch fallback for Gated DeltaNet (bench/plan_qwen35_layers.py): 19 B saved per
// token and value channel in every such layer, 64 B more in the one in backward. Qwen3.5-35B-A3B
// has 30 of them (three in four of its 40 layers), 4096 value channels each.
TEST(PlanMemory, GatedDeltaNetTorchFallbackIsCounted) {
  PlanRequest req;
  req.lora.rank = 16;
  req.setup.seq = 2048;
  req.setup.batch = 2;
  auto torch = make("qwen35_gdn_torch", sparkdoc::testing::qwen35_moe(false), req);
  req.setup.linear_attention = LinearAttention::kFla;
  auto fla = make("qwen35_gdn_fla", sparkdoc::testing::qwen35_moe(false), req);
  const uint64_t tokens = 4096, width = 4096;
  EXPECT_EQ(torch.budget.activations.linear_fallback, tokens * width * (30 * 19 + 64));
  EXPECT_EQ(torch.budget.activations.without_ckpt - fla.budget.activations.without_ckpt,
            torch.budget.activations.linear_fallback);
  EXPECT_EQ(fla.budget.activations.linear_fallback, 0u);
  EXPECT_EQ(render_plan_json(fla)["method"]["linear_attention"], "fla");
  std::string text = render_plan_text(torch);
  EXPECT_NE(text.find("linear attention"), std::string::npos) << text;
  EXPECT_NE(text.find("--linear-attention fla"), std::string::npos);

  // Checkpointed, one such layer is recomputed at a time: its 19 + 64 B, unless the loss head
  // is the larger term. With this vocabulary it always is (14 B per logit is 3.5 MB per token
  // against the layer's ~0.6 MB), so nothing changes.
  req.setup.grad_ckpt = true;
  req.setup.linear_attention = LinearAttention::kTorch;
  auto ckpt = make("qwen35_gdn_ckpt", sparkdoc::testing::qwen35_moe(false), req);
  EXPECT_EQ(ckpt.budget.activations.linear_fallback, 0u);
  // A dense model has no Gated DeltaNet layer: nothing to add.
  auto dense = make("qwen3_gdn", sparkdoc::testing::qwen3_moe(), req);
  EXPECT_EQ(dense.budget.activations.linear_fallback, 0u);
}

TEST(PlanMemory, QloraQuantisesOnlyLinearWeights) {
  PlanRequest req;
  req.training = Training::kQlora;
  req.lora.rank = 16;
  auto q = make("llama_qlora", sparkdoc::testing::tiny_llama(), req);
  req.training = Training::kLora;
  auto l = make("llama_lora", sparkdoc::testing::tiny_llama(), req);
  EXPECT_LT(q.budget.weights, l.budget.weights);
  // The tied embedding stays bf16: at least 2 bytes × 32000 × 256.
  EXPECT_GT(q.budget.weights, 2u * 32000 * 256);
  EXPECT_EQ(q.trainable, l.trainable);
  EXPECT_EQ(q.total_params, l.total_params);
}

}  // namespace
}  // namespace sparkdoc::plan
