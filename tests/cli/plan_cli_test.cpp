// End-to-end `sparkdoc plan`: exit status by verdict, JSON shape, usage errors, a Hugging Face
// cache entry as input, and a recorded snapshot as the memory source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../plan/model_fixtures.h"
#include "shell.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using testing::Outcome;

Outcome run(const std::string& args, bool merge_stderr = true) {
  const std::string command = std::string(SPARKDOC_BIN) + " plan " + args;
  return merge_stderr ? testing::run_shell(command) : testing::run_shell_stdout(command);
}

class PlanCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs each test in its own process, in parallel: one folder per process.
    dir_ = fs::path(::testing::TempDir()) / ("plan_cli_llama_" + std::to_string(::getpid()));
    testing::write_fixture(dir_, testing::tiny_llama(), 2);
  }
  static fs::path dir_;
};
fs::path PlanCli::dir_;

TEST_F(PlanCli, FitsExitsZeroAndDoesNotFitExitsOne) {
  auto ok = run(dir_.string() + " --lora 8 --available 100GB");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("verdict      FITS"));
  EXPECT_THAT(ok.out, HasSubstr("sparkdoc check --need"));
  auto no = run(dir_.string() + " --full --seq 65536 --batch 64 --available 1GB");
  EXPECT_EQ(no.status, 1) << no.out;
  EXPECT_THAT(no.out, HasSubstr("DOES NOT FIT"));
}

// Qwen3-30B-A3B (61 GB of bf16): training fits in 100 GB, transformers' mmap load (the
// checkpoint's page cache beside the weights) does not; sparkdoc's loader does.
TEST(PlanCliLoad, TheLoadIsPartOfTheVerdict) {
  fs::path dir = fs::path(::testing::TempDir()) / ("plan_cli_qwen3_" + std::to_string(::getpid()));
  testing::write_fixture(dir, testing::qwen3_moe(), 4);
  const std::string base = dir.string() +
                           " --lora 16 --targets q_proj,k_proj,v_proj,o_proj --grad-ckpt "
                           "--available 100GB --cuda-context 1GB";
  auto mmap = run(base);
  EXPECT_EQ(mmap.status, 1) << mmap.out;
  EXPECT_THAT(mmap.out, HasSubstr("DOES NOT FIT: the load"));
  EXPECT_THAT(mmap.out, HasSubstr("--loader sparkdoc"));
  EXPECT_THAT(mmap.out, HasSubstr("sparkdoc.patch_transformers(device=\"cuda:0\"), "
                                  "sparkdoc.memory_guard()"));
  EXPECT_THAT(mmap.out, HasSubstr("--drop-cache-every"));
  auto json = run(base + " --json", false);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["fit"]["training_fits"].get<bool>());
  EXPECT_FALSE(j["fit"]["load_fits"].get<bool>());
  EXPECT_FALSE(j["fit"]["fits"].get<bool>());
  EXPECT_EQ(j["sources"]["cuda_context"], "--cuda-context");
  auto loader = run(base + " --loader sparkdoc");
  EXPECT_EQ(loader.status, 0) << loader.out;
  EXPECT_THAT(loader.out, HasSubstr("verdict      FITS"));
  fs::remove_all(dir);
}

// With no machine read, the context is GB10's ~8 GB and the plan says so; --attention eager
// adds the seq^2 scores.
TEST_F(PlanCli, ContextAndAttentionAreNamed) {
  auto r = run(dir_.string() + " --lora 8 --no-memory --json --seq 4096 --attention eager", false);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["memory"]["cuda_context"], 8'000'000'000u);
  EXPECT_THAT(j["sources"]["cuda_context"].get<std::string>(), HasSubstr("GB10"));
  EXPECT_EQ(j["method"]["attention"], "eager");
  EXPECT_GT(j["memory"]["attention_scores"].get<uint64_t>(), 0u);
  EXPECT_EQ(run(dir_.string() + " --attention flash").status, 2);
  EXPECT_EQ(j["method"]["linear_attention"], "torch");
  auto fla = run(dir_.string() + " --lora 8 --no-memory --json --linear-attention fla", false);
  ASSERT_EQ(fla.status, 0) << fla.out;
  EXPECT_EQ(nlohmann::json::parse(fla.out)["method"]["linear_attention"], "fla");
  auto bad = run(dir_.string() + " --linear-attention triton");
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.out, HasSubstr("torch or fla"));
  EXPECT_EQ(run(dir_.string() + " --cuda-context 8").status, 2);
  // 0 is not "the default": it is refused, saying what to give.
  auto zero = run(dir_.string() + " --cuda-context 0GB --no-memory");
  EXPECT_EQ(zero.status, 2);
  EXPECT_THAT(zero.out, HasSubstr("give its size"));
}

// A GPU sparkdoc has no figures for gets no time estimate, and the plan says what to give.
TEST_F(PlanCli, AnUnknownGpuGetsNoTimeButSaysWhy) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/h200-idle.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at; (at = text.find("NVIDIA H200")) != std::string::npos;) {
    text.replace(at, 11, "NVIDIA L40S");
  }
  fs::path snap = fs::path(::testing::TempDir()) / ("l40s_" + std::to_string(::getpid()) + ".json");
  std::ofstream(snap) << text;
  auto r = run(dir_.string() + " --lora 8 --snapshot " + snap.string());
  EXPECT_THAT(r.out, HasSubstr("no time estimate: sparkdoc knows no matrix rate or bandwidth for "
                               "NVIDIA L40S"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("time on ")));
  auto given =
      run(dir_.string() + " --lora 8 --tflops 180 --bandwidth 800 --snapshot " + snap.string());
  EXPECT_THAT(given.out, HasSubstr("time on NVIDIA L40S"));
  fs::remove(snap);
}

TEST_F(PlanCli, JsonCarriesCountsAndTheNeed) {
  auto r = run(dir_.string() + " --lora 8 --targets all-linear --no-memory --json", false);
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["lora"]["modules"], 28);
  EXPECT_EQ(j["parameters"]["trainable"], j["lora"]["trainable"]);
  EXPECT_GT(j["need_bytes"].get<uint64_t>(), j["memory"]["weights"].get<uint64_t>());
  EXPECT_FALSE(j.contains("fit"));
}

TEST_F(PlanCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run(dir_.string() + " --full --lora 8").status, 2);
  EXPECT_EQ(run(dir_.string() + " --optim lion").status, 2);
  EXPECT_EQ(run(dir_.string() + " --framework axolotl").status, 2);
  // Numbers that used to wrap into a FITS: 0 tokens, an 18 EB adapter, 2^64-1 tokens; and a rank
  // of 0 that was read as "not given".
  for (const char* bad : {" --seq 4294967296 --batch 4294967296", " --lora 18446744073709551615",
                          " --seq -1", " --lora 0", " --qlora 0", " --batch 0"}) {
    EXPECT_EQ(run(dir_.string() + bad).status, 2) << bad;
  }
  EXPECT_EQ(run(dir_.string() + " --lora 64 --seq 8192 --batch 4 --no-memory").status, 0);
  auto missing = run((dir_ / "nope").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.out, HasSubstr("no such file or folder"));
  auto bad_target = run(dir_.string() + " --targets input_layernorm --no-memory");
  EXPECT_EQ(bad_target.status, 2);
  EXPECT_THAT(bad_target.out, HasSubstr("cannot wrap"));
  // The shards are headers only: --strict-size refuses them and names the file.
  auto strict = run(dir_.string() + " --strict-size --no-memory");
  EXPECT_EQ(strict.status, 2);
  EXPECT_THAT(strict.out, HasSubstr("model-00001-of-00002.safetensors"));
}

TEST_F(PlanCli, ReadsAHuggingFaceCacheEntryAndASnapshot) {
  fs::path hub = fs::path(::testing::TempDir()) / ("plan_cli_hub_" + std::to_string(::getpid()));
  fs::remove_all(hub);
  fs::path snap = hub / "models--org--tiny" / "snapshots" / "0123abcd";
  fs::create_directories(snap.parent_path());
  testing::write_fixture(snap, testing::tiny_llama(), 1);
  Outcome out = testing::run_shell_stdout("env HF_HUB_CACHE=" + hub.string() + " " + std::string(SPARKDOC_BIN) +
                      " plan org/tiny --lora 8 --snapshot " + std::string(SPARKDOC_FIXTURES) +
                      "/snapshots/gb10-healthy-ngc.json 2>&1");
  EXPECT_EQ(out.status, 0) << out.out;
  EXPECT_THAT(out.out, HasSubstr("snapshot 0123abcd of models--org--tiny (the only one)"));
  EXPECT_THAT(out.out, HasSubstr("snapshot gb10-healthy-ngc.json: MemAvailable"));
}

}  // namespace
}  // namespace sparkdoc
