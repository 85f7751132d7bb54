// A fixture checkpoint written, opened and planned, for the plan tests: write_fixture's files,
// the checkpoint and config.json read back, and make_plan on them.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model_fixtures.h"
#include "plan/plan.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::testing {

struct Opened {
  safetensors::Checkpoint ck;
  plan::ModelConfig config;
};

// Writes `m` under the test's temporary folder as `name` in `shards` shards and opens it.
inline Opened open_fixture(const std::string& name, const ModelFixture& m, size_t shards = 3) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("plan_" + name);
  write_fixture(dir, m, shards);
  auto ck = safetensors::open_checkpoint(dir.string(), {safetensors::SizeCheck::kHeaderOnly});
  EXPECT_TRUE(ck) << (ck ? "" : ck.error().message);
  auto config = plan::read_config((dir / "config.json").string());
  EXPECT_TRUE(config) << (config ? "" : config.error().message);
  return {ck ? std::move(*ck) : safetensors::Checkpoint{},
          config ? std::move(*config) : plan::ModelConfig{}};
}

// LoRA at rank `r` on `targets` (all-linear when targets is {"all-linear"}), with the routed
// experts when `experts`.
inline plan::PlanRequest lora_request(uint64_t r, std::vector<std::string> targets, bool experts,
                                      plan::Framework f = plan::Framework::kPeft) {
  plan::PlanRequest req;
  req.training = plan::Training::kLora;
  req.lora.rank = r;
  if (targets.size() == 1 && targets[0] == "all-linear") {
    req.lora.all_linear = true;
  } else {
    req.lora.targets = std::move(targets);
  }
  req.lora.experts = experts;
  req.lora.framework = f;
  return req;
}

// lora_request's plan; an empty Plan (and a test failure) when make_plan refuses.
inline plan::Plan lora_plan(const Opened& o, uint64_t r, std::vector<std::string> targets,
                            bool experts, plan::Framework f = plan::Framework::kPeft) {
  auto p = plan::make_plan(o.ck, o.config, lora_request(r, std::move(targets), experts, f));
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return p ? std::move(*p) : plan::Plan{};
}

// lora_request's refusal, or "" when it plans.
inline std::string lora_refusal(const Opened& o, uint64_t r, std::vector<std::string> targets,
                                bool experts = false) {
  auto p = plan::make_plan(o.ck, o.config, lora_request(r, std::move(targets), experts));
  return p ? std::string() : p.error().message;
}

// make_plan of `req` on `m` written in `shards` shards.
inline plan::Plan plan_fixture(const std::string& name, const ModelFixture& m,
                               const plan::PlanRequest& req, size_t shards = 2) {
  Opened o = open_fixture(name, m, shards);
  auto p = plan::make_plan(o.ck, o.config, req);
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return p ? std::move(*p) : plan::Plan{};
}

inline plan::Plan full_plan(const Opened& o) {
  plan::PlanRequest req;
  req.training = plan::Training::kFull;
  auto p = plan::make_plan(o.ck, o.config, req);
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return p ? std::move(*p) : plan::Plan{};
}

}  // namespace sparkdoc::testing
