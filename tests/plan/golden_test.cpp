// Golden `sparkdoc plan` text and JSON for header-only fixtures written at test time:
// tests/fixtures/golden/plan-NAME.txt and plan-NAME.json, compared byte for byte.
// SPARKDOC_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include <gtest/gtest.h>

#include <filesystem>

#include "golden.h"
#include "model_fixtures.h"
#include "plan/plan.h"

namespace sparkdoc::plan {
namespace {

namespace fs = std::filesystem;
using sparkdoc::testing::compare_or_update;
using sparkdoc::testing::golden_dir;

void golden(const std::string& name, const sparkdoc::testing::ModelFixture& m,
            const PlanRequest& req, std::optional<Available> available) {
  fs::path dir = fs::path(::testing::TempDir()) / ("plangold_" + name);
  sparkdoc::testing::write_fixture(dir, m, 2);
  auto ck = safetensors::open_checkpoint(dir.string(), {safetensors::SizeCheck::kHeaderOnly});
  ASSERT_TRUE(ck) << ck.error().message;
  auto config = read_config((dir / "config.json").string());
  ASSERT_TRUE(config);
  auto p = make_plan(*ck, *config, req);
  ASSERT_TRUE(p) << p.error().message;
  if (available) judge_fit(*p, *available);
  p->model_dir = "<fixture>/" + name;
  p->resolved_from = "";
  compare_or_update(golden_dir() / ("plan-" + name + ".txt"), render_plan_text(*p));
  compare_or_update(golden_dir() / ("plan-" + name + ".json"),
                    render_plan_json(*p).dump(2) + "\n");
}

TEST(PlanGolden, Qwen35LoraWithExpertsOnASpark) {
  PlanRequest req;
  req.lora.rank = 32;
  req.alpha = 32;
  req.lora.experts = true;
  req.setup.optimizer = Optimizer::kAdamW8bit;
  req.setup.seq = 2048;
  req.setup.batch = 2;
  req.setup.grad_ckpt = true;
  golden("qwen35-lora-experts", sparkdoc::testing::qwen35_moe(false), req,
         Available{110'000'000'000, "snapshot gb10-idle.json: MemAvailable + SwapFree - 8 GiB"});
}

TEST(PlanGolden, NemotronUnsloth) {
  PlanRequest req;
  req.lora.rank = 32;
  req.lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "out_proj", "up_proj",
                      "down_proj"};
  req.lora.framework = Framework::kUnsloth;
  req.setup.seq = 6144;
  req.setup.grad_ckpt = true;
  golden("nemotron-unsloth", sparkdoc::testing::nemotron_h(true), req, std::nullopt);
}

TEST(PlanGolden, TinyLlamaFullFineTuneDoesNotFit) {
  PlanRequest req;
  req.training = Training::kFull;
  req.setup.seq = 4096;
  req.setup.batch = 8;
  golden("tiny-llama-full", sparkdoc::testing::tiny_llama(), req,
         Available{4'000'000'000, "test figure"});
}

}  // namespace
}  // namespace sparkdoc::plan
