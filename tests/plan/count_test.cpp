// Parameter and LoRA counts against the numbers PEFT and Unsloth print for the seeds' models
// (reference memory-planning.md §0, §2, §9 test vectors).
#include <gtest/gtest.h>

#include <filesystem>

#include "model_fixtures.h"
#include "plan/plan.h"
#include "plan_helpers.h"

namespace sparkdoc::plan {
namespace {

namespace fs = std::filesystem;
using sparkdoc::testing::ModelFixture;

using sparkdoc::testing::lora_plan;
using sparkdoc::testing::open_fixture;
using sparkdoc::testing::Opened;

const std::vector<std::string> kQwenTargets{"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                            "gate_proj", "up_proj", "down_proj"};
const std::vector<std::string> kNemotronTargets{"q_proj",  "k_proj",   "v_proj",  "o_proj",
                                                "in_proj", "out_proj", "up_proj", "down_proj"};

// A header that claims 2^36 experts (a few hundred bytes on disk) is not a model: the planner
// neither counts them as experts nor does work per claimed expert (it used to allocate two
// entries per expert for Unsloth until out of memory).
TEST(PlanBounds, AHeaderClaimingBillionsOfExpertsIsNotPlannedExpertByExpert) {
  sparkdoc::testing::ModelFixture m = sparkdoc::testing::tiny_llama();
  m.tensors.push_back(
      {"model.layers.0.mlp.experts.gate_up_proj", "BF16", {uint64_t{1} << 36, 2, 1}});
  m.tensors.push_back(
      {"model.layers.1.mlp.experts.7000000000000.down_proj.weight", "BF16", {2, 2}});
  Opened o = open_fixture("absurd_experts", m, 1);
  Plan p = lora_plan(o, 16, kQwenTargets, true, Framework::kUnsloth);
  std::string notes;
  for (const auto& n : p.model.notes) notes += n + "\n";
  EXPECT_NE(notes.find("claims 68719476736 experts, more than any model has"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("names expert 7000000000000, more than any model has"), std::string::npos)
      << notes;
}

class Qwen35 : public ::testing::TestWithParam<bool> {};

TEST_P(Qwen35, MatchesPeftAndTransformers) {
  static std::map<bool, Opened> cache;
  bool per_expert = GetParam();
  if (!cache.count(per_expert)) {
    cache.emplace(per_expert, open_fixture(per_expert ? "qwen35_per_expert" : "qwen35",
                                           sparkdoc::testing::qwen35_moe(per_expert), 14));
  }
  const Opened& o = cache.at(per_expert);
  auto p = lora_plan(o, 32, kQwenTargets, true);
  // Transformers' Qwen3_5MoeForConditionalGeneration: vision included, mtp.* dropped.
  EXPECT_EQ(p.total_params, 35'107'181'936u);
  EXPECT_EQ(p.model.vision_params, 446'571'248u);
  EXPECT_EQ(p.trainable, 1'862'205'440u);
  EXPECT_EQ(p.all_params, 36'969'387'376u);
  EXPECT_EQ(p.lora->modules, 240u);
  EXPECT_EQ(p.lora->target_parameters,
            (std::vector<std::string>{"mlp.experts.down_proj", "mlp.experts.gate_up_proj"}));
  // Adapter file ~7.45 GB ("~7.4 GB", 001).
  EXPECT_NEAR(static_cast<double>(p.budget.adapter_file), 7'448'821'760.0, 5e6);

  auto no_experts = lora_plan(o, 32, kQwenTargets, false);
  EXPECT_EQ(no_experts.trainable, 16'711'680u);
  EXPECT_EQ(no_experts.lora->modules, 160u);
  EXPECT_EQ(no_experts.all_params, 35'123'893'616u);

  PlanRequest all_linear;
  all_linear.lora.rank = 32;
  all_linear.lora.all_linear = true;
  auto al = make_plan(o.ck, o.config, all_linear);
  ASSERT_TRUE(al) << al.error().message;
  EXPECT_EQ(al->trainable, 60'862'720u);

  // Unsloth 2026.5.2 notebook: r=8 with gate_up_proj named prints 714,752,000 of 35,821,933,936.
  auto un = lora_plan(o, 8,
                      {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                       "gate_up_proj"},
                      false, Framework::kUnsloth);
  EXPECT_EQ(un.trainable, 714'752'000u);
  EXPECT_EQ(un.all_params, 35'821'933'936u);
}

INSTANTIATE_TEST_SUITE_P(ExpertLayouts, Qwen35, ::testing::Values(false, true));

class Nemotron : public ::testing::TestWithParam<bool> {};

TEST_P(Nemotron, MatchesTheSeedAndPeft) {
  static std::map<bool, Opened> cache;
  bool remote = GetParam();
  if (!cache.count(remote)) {
    cache.emplace(remote, open_fixture(remote ? "nemotron_remote" : "nemotron",
                                       sparkdoc::testing::nemotron_h(remote)));
  }
  const Opened& o = cache.at(remote);
  // 000 §11: standard PEFT ~116 modules / 27 M trainable.
  auto peft = lora_plan(o, 32, kNemotronTargets, false);
  EXPECT_EQ(peft.total_params, 31'577'937'344u);
  EXPECT_EQ(peft.lora->modules, 116u);
  EXPECT_EQ(peft.trainable, 27'711'488u);
  ASSERT_FALSE(peft.warnings.empty());  // current PEFT refuses Mamba out_proj
  EXPECT_NE(peft.warnings[0].find("out_proj"), std::string::npos);
  // 000 §11: Unsloth ~6,004 modules / 883 M with all 128 experts.
  auto unsloth = lora_plan(o, 32, kNemotronTargets, false, Framework::kUnsloth);
  EXPECT_EQ(unsloth.lora->modules, 6'004u);
  EXPECT_EQ(unsloth.trainable, 883'873'792u);
  // Unsloth notebook at r=8: 220,968,448 of 31,798,905,792.
  auto r8 = lora_plan(o, 8, kNemotronTargets, false, Framework::kUnsloth);
  EXPECT_EQ(r8.trainable, 220'968'448u);
  EXPECT_EQ(r8.all_params, 31'798'905'792u);
  // peft 0.21 with target_parameters, out_proj left out.
  auto p21 = lora_plan(o, 32,
                       {"q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "up_proj", "down_proj"},
                       true);
  EXPECT_EQ(p21.trainable, 878'880'768u);
  EXPECT_EQ(p21.all_params, 32'456'818'112u);
  EXPECT_EQ(p21.lora->modules, 139u);
  EXPECT_TRUE(p21.warnings.empty());
  auto attn = lora_plan(o, 32, {"q_proj", "k_proj", "v_proj", "o_proj"}, false);
  EXPECT_EQ(attn.trainable, 3'735'552u);
  EXPECT_EQ(attn.all_params, 31'581'672'896u);
  EXPECT_EQ(attn.lora->modules, 24u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, Nemotron, ::testing::Values(false, true));

TEST(PlanCounts, Qwen3MoeUnslothNotebookAndPeftOnTransformers5) {
  auto o = open_fixture("qwen3_moe", sparkdoc::testing::qwen3_moe());
  // Unsloth notebook (transformers 5): 1,285,029,888 of 31,817,152,512 at r=32.
  auto un = lora_plan(o, 32, kQwenTargets, true, Framework::kUnsloth);
  EXPECT_EQ(un.total_params, 30'532'122'624u);
  EXPECT_EQ(un.trainable, 1'285'029'888u);
  EXPECT_EQ(un.all_params, 31'817'152'512u);
  // peft 0.21 + transformers 5.17, measured on the H200 (bench/plan_vs_peft.py): gate_proj and
  // up_proj become gate_up_proj at rank 2r, down_proj the experts' down_proj.
  auto r16 = lora_plan(o, 16, kQwenTargets, false);
  EXPECT_EQ(r16.trainable, 994'836'480u);
  EXPECT_EQ(r16.all_params, 31'526'959'104u);
  EXPECT_EQ(r16.lora->modules, 288u);
  auto r32 = lora_plan(o, 32, kQwenTargets, true);
  EXPECT_EQ(r32.trainable, 1'989'672'960u);
  EXPECT_EQ(r32.lora->modules, 288u);
  PlanRequest al;
  al.lora.rank = 8;
  al.lora.all_linear = true;
  auto all_linear = make_plan(o.ck, o.config, al);
  ASSERT_TRUE(all_linear) << all_linear.error().message;
  EXPECT_EQ(all_linear->trainable, 498'253'824u);
  EXPECT_EQ(all_linear->all_params, 31'030'376'448u);
  EXPECT_EQ(all_linear->lora->modules, 336u);
  // gate_proj alone cannot be converted.
  PlanRequest half;
  half.lora.rank = 8;
  half.lora.targets = {"q_proj", "gate_proj"};
  EXPECT_FALSE(make_plan(o.ck, o.config, half));
}

TEST(PlanCounts, TiedEmbeddingsCountOnceAndBuffersNotAtAll) {
  auto o = open_fixture("tiny_llama", sparkdoc::testing::tiny_llama(), 1);
  PlanRequest full;
  full.training = Training::kFull;
  auto p = make_plan(o.ck, o.config, full);
  ASSERT_TRUE(p) << p.error().message;
  uint64_t layer = 256 * 256 * 2 + 64 * 256 * 2 + 1024 * 256 * 3 + 2 * 256;
  EXPECT_EQ(p->total_params, 32000u * 256 + 4 * layer + 256);
  EXPECT_TRUE(p->model.tied);
  EXPECT_EQ(p->trainable, p->total_params);
  // all-linear leaves the (tied) output head out; naming it adapts it.
  PlanRequest al;
  al.lora.rank = 8;
  al.lora.all_linear = true;
  auto a = make_plan(o.ck, o.config, al);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->lora->modules, 28u);
  auto head = lora_plan(o, 8, {"lm_head"}, false);
  EXPECT_EQ(head.trainable, 8u * (32000 + 256));
  auto embed = lora_plan(o, 8, {"embed_tokens"}, false);
  EXPECT_EQ(embed.trainable, 8u * (32000 + 256));
}

TEST(PlanCounts, TargetsPeftCannotWrapAreErrors) {
  auto o = open_fixture("nemotron_errors", sparkdoc::testing::nemotron_h(false), 1);
  PlanRequest req;
  req.lora.rank = 8;
  req.lora.targets = {"gate"};  // the routers: TopKRouter in transformers 5
  auto r = make_plan(o.ck, o.config, req);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Router"), std::string::npos);
  req.lora.targets = {"mixer"};
  EXPECT_FALSE(make_plan(o.ck, o.config, req));
  req.lora.targets = {"experts"};
  EXPECT_FALSE(make_plan(o.ck, o.config, req));
  req.lora.targets = {"norm"};
  EXPECT_FALSE(make_plan(o.ck, o.config, req));
  req.lora.targets = {"nothing_here"};
  auto none = make_plan(o.ck, o.config, req);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("not found in the base model"), std::string::npos);
  req.lora.targets = {"q_proj", "nothing_here"};
  auto some = make_plan(o.ck, o.config, req);
  ASSERT_TRUE(some);
  ASSERT_EQ(some->warnings.size(), 1u);
  EXPECT_NE(some->warnings[0].find("'nothing_here' matches no module"), std::string::npos);
}

TEST(PlanCounts, PeftTurnsTheRouterNameIntoItsParameterOnQwen2MoeFamilies) {
  auto o = open_fixture("qwen3_moe_router", sparkdoc::testing::qwen3_moe(), 1);
  auto p = lora_plan(o, 8, {"gate"}, false);
  EXPECT_EQ(p.trainable, 48u * 8 * (2048 + 128));
  EXPECT_EQ(p.lora->target_parameters, std::vector<std::string>{"gate.weight"});
}

}  // namespace
}  // namespace sparkdoc::plan
