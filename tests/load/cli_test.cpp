// `sparkdoc load` end to end against the fake libcuda (tests/gpu/fake_cuda.cpp): a load, a
// verified one, a benchmark of several runs, the JSON document's keys, and the failures (no
// such checkpoint, no driver) with their exit status. Timings vary; the shape and the counts
// do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "checkpoint_files.h"
#include "shell.h"

namespace sparkdoc::load {
namespace {

namespace fs = std::filesystem;
using sparkdoc::testing::Outcome;
using sparkdoc::testing::run_shell;
using sparkdoc::testing::run_shell_stdout;
using ::testing::HasSubstr;
using testing::make_tensor;
using ::testing::MatchesRegex;

class LoadCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::test_folder("sparkdoc-load-cli",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "fixture.json") << testing::fake_fixture(64ull << 20);
    testing::write_safetensors(
        dir_ / "model.safetensors",
        {make_tensor("a.weight", "BF16", {17, 33}, 11), make_tensor("b.bias", "F32", {5}, 12),
         make_tensor("empty", "I64", {0}, 13)});
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string env() const {
    return std::string("SPARKDOC_CUDA_LIBRARY=") + SPARKDOC_FAKE_CUDA +
           " SPARKDOC_FAKE_GPU_FIXTURE=" + (dir_ / "fixture.json").string() + " ";
  }
  Outcome load(const std::string& args) const {
    return run_shell(env() + SPARKDOC_BIN + " load " + (dir_ / "model.safetensors").string() +
                     " --readers 2 " + args);
  }

  fs::path dir_;
};

TEST_F(LoadCli, OneLoadSaysWhatItCost) {
  Outcome r = load("");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, MatchesRegex("loaded 3 tensors from 1 file to GPU 0: 0\\.0 GB in [0-9.]+ s: "
                                  "[0-9.]+ GB/s; peak RSS [-+][0-9.]+ MiB \\((during the load|"
                                  "process peak)\\); page cache ([-+][0-9.]+ MiB \\(peak "
                                  "[-+][0-9.]+ MiB\\)|unknown)\n"));
}

TEST_F(LoadCli, VerifiedBenchmarkReportsEveryRun) {
  Outcome r = load("--verify --bench --repeat 2");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("run 1: 0.0 GB in "));
  EXPECT_THAT(r.out, HasSubstr("run 2: 0.0 GB in "));
  EXPECT_THAT(r.out, HasSubstr("loaded 3 tensors from 1 file to GPU 0: "));
  EXPECT_THAT(r.out, HasSubstr("staging: 2 readers x 2 slots x 4.0 MiB); device memory "));
  EXPECT_THAT(r.out, HasSubstr("s; best of 2 runs\n"));
  EXPECT_THAT(r.out, HasSubstr("  " + (dir_ / "model.safetensors").string() + ": "));
  EXPECT_THAT(r.out, HasSubstr("verified: all 3 tensors match a plain read of the files\n"));
}

TEST_F(LoadCli, JsonHoldsTheRunsAndTheVerification) {
  Outcome r =
      run_shell_stdout(env() + SPARKDOC_BIN + " load " + (dir_ / "model.safetensors").string() +
                       " --readers 2 --slots 3 --chunk-mib 1 --direct off --verify "
                       "--bench --repeat 2 --json");
  EXPECT_EQ(r.status, 0) << r.out;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"alloc_seconds", "best_gb_per_s", "bytes",
                                            "chunk_bytes", "device", "files", "ok", "path",
                                            "readers", "runs", "setup_seconds", "slots_per_reader",
                                            "staging_bytes", "tensors", "verify"}));
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["tensors"], 3);
  EXPECT_EQ(doc["bytes"], 17 * 33 * 2 + 5 * 4);
  EXPECT_EQ(doc["readers"], 2);
  EXPECT_EQ(doc["slots_per_reader"], 3);
  EXPECT_EQ(doc["chunk_bytes"], 1 << 20);
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_EQ(doc["files"][0]["direct"], false);
  ASSERT_EQ(doc["runs"].size(), 2u);
  std::vector<std::string> run_keys;
  for (const auto& [key, value] : doc["runs"][0].items()) run_keys.push_back(key);
  EXPECT_EQ(run_keys,
            (std::vector<std::string>{"bytes", "bytes_read", "gb_per_s", "page_cache_growth_bytes",
                                      "page_cache_peak_growth_bytes", "peak_rss_bytes",
                                      "peak_rss_exact", "peak_rss_growth_bytes", "readers", "reads",
                                      "rss_before_bytes", "seconds"}));
  EXPECT_EQ(doc["runs"][1]["bytes"], 17 * 33 * 2 + 5 * 4);
  EXPECT_EQ(doc["verify"]["checked"], 3);
  EXPECT_EQ(doc["verify"]["differ"], nlohmann::json::array());
}

// A path that is not there is a usage error, exit 2, as for every command's input (issue 18).
TEST_F(LoadCli, MissingCheckpointFailsWithTheReason) {
  Outcome r = run_shell_stdout(env() + SPARKDOC_BIN + " load " + (dir_ / "nothing").string() +
                               " --json 2>/dev/null");
  EXPECT_EQ(r.status, 2) << r.out;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["ok"], false);
  EXPECT_THAT(doc["error"].get<std::string>(), HasSubstr("nothing"));
  Outcome text = load("--device 3");
  EXPECT_EQ(text.status, 1) << text.out;
  EXPECT_THAT(text.out, ::testing::StartsWith("sparkdoc load: "));
}

TEST_F(LoadCli, NoDriverFailsWithTheReason) {
  Outcome r =
      run_shell("SPARKDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 " + std::string(SPARKDOC_BIN) +
                " load " + (dir_ / "model.safetensors").string());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::StartsWith("sparkdoc load: "));
  EXPECT_THAT(r.out, HasSubstr("libcuda.so.1"));
}

TEST_F(LoadCli, UsageErrorsExitTwo) {
  EXPECT_EQ(load("--direct sideways").status, 2);
  EXPECT_EQ(load("--slots 0").status, 2);
  EXPECT_EQ(load("--device -1").status, 2);
  EXPECT_EQ(load("--bench --repeat 0").status, 2);
}

}  // namespace
}  // namespace sparkdoc::load
