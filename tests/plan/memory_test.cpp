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
