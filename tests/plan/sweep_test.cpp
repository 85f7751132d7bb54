// Real checkpoints of the architecture sweep (tests/fixtures/plan/sweep: header-only, each class
// of transformers 5.17 at its default config, in the v5 layout or the original one transformers
// converts at load) against the counts PEFT 0.21 gave for them on the H200: full fine-tuning,
// LoRA r=16 on q,k,v,o,gate,up,down, r=8 all-linear and r=32 with the routed experts. One
// checkpoint for each rule of the model view and of PEFT's rewriting; bench/plan_sweep_compare.py
// runs all 222 architectures the same way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "plan/locate.h"

namespace sparkdoc::plan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSweep = fs::path(SPARKDOC_FIXTURES) / "plan" / "sweep";

PlanRequest request_for(const json& v) {
  PlanRequest req;
  if (v["method"] == "full") {
    req.training = Training::kFull;
    return req;
  }
  req.training = Training::kLora;
  req.lora.rank = v["r"].get<uint64_t>();
  if (v["targets"].is_string()) {
    req.lora.all_linear = true;
  } else {
    req.lora.targets = v["targets"].get<std::vector<std::string>>();
  }
  req.lora.experts = v.contains("target_parameters");
  return req;
}

TEST(PlanSweep, CountsAsPeftOnRealCheckpointsOfTheSweep) {
  std::ifstream in(kSweep / "peft.json");
  ASSERT_TRUE(in) << kSweep;
  json data = json::parse(in);
  size_t compared = 0;
  for (const auto& ck : data["checkpoints"]) {
    std::string dir = (kSweep / ck["dir"].get<std::string>()).string();
    for (const auto& entry : ck["variants"]) {
      const json& v = entry["variant"];
      const json& peft = entry["peft"];
      std::string what = ck["dir"].get<std::string>() + " " + v["label"].get<std::string>();
      auto p = plan_model(dir, {safetensors::SizeCheck::kHeaderOnly}, request_for(v));
      ++compared;
      if (peft.contains("error")) {
        // PEFT raised: sparkdoc refuses, or plans and says why PEFT would not.
        if (!p) continue;
        bool says_why = false;
        for (const auto& w : p->warnings) {
          says_why = says_why || w.find("matches no module") == std::string::npos;
        }
        EXPECT_TRUE(says_why) << what << ": PEFT raised " << peft["error"];
        continue;
      }
      ASSERT_TRUE(p) << what << ": " << p.error().message;
      EXPECT_EQ(p->trainable, peft["trainable"].get<uint64_t>()) << what;
      EXPECT_EQ(p->all_params, peft["all"].get<uint64_t>()) << what;
      if (p->lora) {
        EXPECT_EQ(p->lora->modules, peft["modules"].get<uint64_t>()) << what;
      }
    }
  }
  EXPECT_GE(compared, 100u);
}

}  // namespace
}  // namespace sparkdoc::plan
