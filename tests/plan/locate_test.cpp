// Finding and reading the model `sparkdoc plan` is asked about: --optim's names, "org/name" in
// the Hugging Face cache, and a checkpoint without its config.json.
#include "plan/locate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "plan/memory.h"
#include "safetensors_writer.h"

namespace sparkdoc::plan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class Folder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sparkdoc-plan-locate-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(ParseOptimizer, TakesTransformersSpellings) {
  EXPECT_EQ(parse_optimizer("adamw_torch_fused"), Optimizer::kAdamW);
  EXPECT_EQ(parse_optimizer("paged_adamw_8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(parse_optimizer("adafactor"), Optimizer::kAdafactor);
  EXPECT_EQ(parse_optimizer("adam"), std::nullopt);
  for (auto o :
       {Optimizer::kAdamW, Optimizer::kAdamW8bit, Optimizer::kSgd, Optimizer::kAdafactor}) {
    EXPECT_EQ(parse_optimizer(optimizer_name(o)), o);
  }
}

TEST_F(Folder, OrgNameIsFoundInTheFirstCacheThatHoldsIt) {
  fs::create_directories(dir_ / "second" / "models--org--name");
  std::vector<std::string> roots = {(dir_ / "first").string(), (dir_ / "second").string()};
  EXPECT_EQ(locate_model("org/name", roots), (dir_ / "second" / "models--org--name").string());
  EXPECT_EQ(locate_model("org/other", roots), "org/other");
  EXPECT_EQ(locate_model("org/name/extra", roots), "org/name/extra");
  EXPECT_EQ(locate_model("/abs/org", roots), "/abs/org");
  EXPECT_EQ(locate_model("plain", roots), "plain");
}

TEST_F(Folder, ARevisionIsFoundByItsRefOrItsCommit) {
  const fs::path entry = dir_ / "hub" / "models--org--name";
  fs::create_directories(entry / "snapshots" / "abc123");
  fs::create_directories(entry / "snapshots" / "def456");
  fs::create_directories(entry / "refs");
  std::ofstream(entry / "refs" / "main") << "abc123\n";
  std::vector<std::string> roots = {(dir_ / "none").string(), (dir_ / "hub").string()};
  EXPECT_EQ(locate_revision("org/name", "main", roots), (entry / "snapshots" / "abc123").string());
  EXPECT_EQ(locate_revision("org/name", "def456", roots),
            (entry / "snapshots" / "def456").string());
  EXPECT_EQ(locate_revision("org/name", "v9", roots), std::nullopt);
  EXPECT_EQ(locate_revision("org/other", "main", roots), std::nullopt);
  EXPECT_EQ(locate_revision("org/name", "../snapshots/abc123", roots), std::nullopt);
  // A ref that names a path is not followed out of the entry.
  std::ofstream(entry / "refs" / "evil") << "../../..";
  EXPECT_EQ(locate_revision("org/name", "evil", roots), std::nullopt);
}

TEST_F(Folder, ACheckpointWithoutConfigSaysConfigIsNeeded) {
  testing::write_safetensors(dir_ / "model.safetensors", {{"w", "BF16", {4, 4}}});
  auto p = plan_model(dir_.string(), {}, PlanRequest{});
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message, HasSubstr("(config.json beside the checkpoint is needed)"));
  EXPECT_FALSE(plan_model((dir_ / "missing").string(), {}, PlanRequest{}));
}

}  // namespace
}  // namespace sparkdoc::plan
