// A fixture checkpoint written to a temporary folder and planned, for the memory tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "model_fixtures.h"
#include "plan/plan.h"

namespace sparkdoc::testing {

inline plan::Plan plan_fixture(const std::string& name, const ModelFixture& m,
                               const plan::PlanRequest& req, int shards = 2) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("plan_" + name);
  write_fixture(dir, m, shards);
  auto ck = safetensors::open_checkpoint(dir.string(), {safetensors::SizeCheck::kHeaderOnly});
  EXPECT_TRUE(ck);
  auto config = plan::read_config((dir / "config.json").string());
  EXPECT_TRUE(config);
  auto p = plan::make_plan(*ck, *config, req);
  EXPECT_TRUE(p) << (p ? "" : p.error().message);
  return std::move(*p);
}

}  // namespace sparkdoc::testing
