// `sparkdoc bw` end to end: without a driver (a SKIP with the reason, never a crash), through
// the fake NVML and libcuda (a GB10 judged PASS or WARN, an H200 INFO), saving into a fresh or
// a recorded snapshot that `check --snapshot` then judges, and the usage errors.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "shell.h"

namespace sparkdoc {
namespace {

using ::testing::HasSubstr;

using testing::Outcome;
using testing::run_shell;

std::string fake_env(const std::string& gpu_fixture) {
  return std::string("SPARKDOC_NVML_LIBRARY=") + SPARKDOC_FAKE_NVML +
         " SPARKDOC_CUDA_LIBRARY=" + SPARKDOC_FAKE_CUDA + " SPARKDOC_FAKE_GPU_FIXTURE=" +
         SPARKDOC_FIXTURES + "/gpu/" + gpu_fixture + " ";
}

// Small and quick: the fake's "device" is host memory.
const std::string kSmall = " --size 1MiB --iterations 2 --warmup 1 --threads 2";

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("sparkdoc-bw-cli-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

nlohmann::json parse_json(const Outcome& r) {
  auto brace = r.out.find('{');
  EXPECT_NE(brace, std::string::npos) << r.out;
  return nlohmann::json::parse(r.out.substr(brace == std::string::npos ? 0 : brace), nullptr,
                               false);
}

TEST(BwCli, NoDriverSkipsWithTheReasonAndExitsOne) {
  std::string env = "SPARKDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "
                    "SPARKDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 ";
  Outcome r = run_shell(env + SPARKDOC_BIN + " bw" + kSmall);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("device 0: not measured: "));
  EXPECT_THAT(r.out, HasSubstr("G5 SKIP: the bandwidth measurement failed: "));
  EXPECT_THAT(r.out, HasSubstr("host copy"));
  Outcome j = run_shell(env + SPARKDOC_BIN + " bw --no-host --json" + kSmall);
  EXPECT_EQ(j.status, 1) << j.out;
  nlohmann::json doc = parse_json(j);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc["bandwidth"]["absent"], "error");
  EXPECT_EQ(doc["g5"]["verdict"], "skip");
  EXPECT_EQ(doc["host"]["absent"], "absent");
}

TEST(BwCli, H200IsInfoAgainstTheNominalFigure) {
  Outcome r = run_shell(fake_env("h200.json") + SPARKDOC_BIN + " bw --json" + kSmall);
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json j = parse_json(r);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["platform"], "nvidia-discrete");
  EXPECT_GT(j["bandwidth"]["device_copy_gbps"].get<double>(), 0);
  EXPECT_THAT(j["bandwidth"]["method"].get<std::string>(), HasSubstr("read + write"));
  EXPECT_EQ(j["bandwidth"]["h2d"]["bytes_per_run"], 1048576);
  EXPECT_EQ(j["bandwidth"]["host"]["copy"]["bytes_per_run"], 2097152);
  EXPECT_EQ(j["bandwidth"]["nominal_gbps"], 4800.0);
  EXPECT_EQ(j["g5"]["verdict"], "info");
  EXPECT_THAT(j["g5"]["detail"].get<std::string>(), HasSubstr("of the nominal 4800 GB/s"));
  EXPECT_TRUE(j["saved"].is_null());
}

TEST(BwCli, SavedOnASparkCheckJudgesG5FromIt) {
  std::string file = temp_file("gb10.json");
  Outcome r = run_shell(fake_env("gb10.json") + SPARKDOC_BIN + " bw --save " + file + kSmall);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("saved into " + file));
  EXPECT_THAT(r.out, HasSubstr("nominal: 273 GB/s (NVIDIA GB10, LPDDR5x)"));
  Outcome c = run_shell(std::string(SPARKDOC_BIN) + " check --color never --only G5 --snapshot " +
                        file);
  EXPECT_TRUE(c.status == 0 || c.status == 1) << c.out;
  EXPECT_TRUE(std::regex_search(c.out, std::regex(R"(G5 (PASS|WARN): measured [0-9.]+ GB/s)")))
      << c.out;
  std::filesystem::remove(file);
}

// `bw --save FILE` once wrote FILE.sparkdoc-tmp, a name anyone who can write the folder could
// plant a link at; the temporary file now has a name nobody can guess, and is never followed.
TEST(BwCli, ALinkAtTheOldTemporaryNameIsNotWrittenThrough) {
  std::string file = temp_file("linked.json");
  std::string victim = temp_file("victim");
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".sparkdoc-tmp");
  ASSERT_TRUE(std::ofstream(victim) << "precious\n");
  std::filesystem::create_symlink(victim, file + ".sparkdoc-tmp");
  Outcome r = run_shell(fake_env("gb10.json") + SPARKDOC_BIN + " bw --save " + file + kSmall);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_text(victim).value_or(""), "precious\n");
  auto saved = nlohmann::json::parse(read_text(file, 64u << 20).value_or(""), nullptr, false);
  EXPECT_TRUE(saved.is_object()) << r.out;
  EXPECT_FALSE(std::filesystem::is_symlink(file));
  for (const std::string& f : {file, file + ".sparkdoc-tmp", victim}) std::filesystem::remove(f);
}

TEST(BwCli, ARecordedSnapshotGetsTheMeasurementAndKeepsTheRest) {
  std::string file = temp_file("h200-idle.json");
  std::filesystem::copy_file(std::string(SPARKDOC_FIXTURES) + "/snapshots/h200-idle.json", file,
                             std::filesystem::copy_options::overwrite_existing);
  std::string update = fake_env("h200.json") + SPARKDOC_BIN + " bw --no-host --snapshot " + file +
                       " --save " + file + kSmall;
  // The first update also writes the keys this fixture predates (with their defaults); the
  // second shows that nothing but the measurement changes.
  ASSERT_EQ(run_shell(update).status, 0);
  auto before = nlohmann::json::parse(*read_text(file, 64u << 20));
  Outcome r = run_shell(update);
  ASSERT_EQ(r.status, 0) << r.out;
  auto after = nlohmann::json::parse(*read_text(file, 64u << 20));
  EXPECT_EQ(after["bandwidth"]["device_name"], "NVIDIA H200");
  EXPECT_THAT(after["bandwidth"]["host"]["detail"].get<std::string>(), HasSubstr("--no-host"));
  after.erase("bandwidth");
  before.erase("bandwidth");
  EXPECT_EQ(after, before);
  Outcome c = run_shell(std::string(SPARKDOC_BIN) + " check --color never --only G5 --snapshot " +
                        file);
  EXPECT_THAT(c.out, HasSubstr("G5 INFO: measured "));
  EXPECT_THAT(c.out, HasSubstr("of the nominal 4800 GB/s (NVIDIA H200, HBM3e)"));
  std::filesystem::remove(file);
}

TEST(BwCli, UsageErrorsExitTwo) {
  std::string bin = SPARKDOC_BIN;
  for (const char* args : {" bw --snapshot x.json", " bw --size 0", " bw --size banana",
                           " bw --iterations 0", " bw --warmup -1", " bw --device -1",
                           " bw --no-such-flag"}) {
    Outcome r = run_shell(bin + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
  }
  Outcome missing = run_shell(bin + " bw --snapshot /nonexistent.json --save /tmp/x.json");
  EXPECT_EQ(missing.status, 2) << missing.out;
}

TEST(BwCli, AFileThatCannotBeWrittenExitsTwo) {
  Outcome r = run_shell(fake_env("h200.json") + SPARKDOC_BIN +
                        " bw --no-host --save /nonexistent/dir/snapshot.json" + kSmall);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot write"));
}

TEST(BwCli, HelpTeachesTheCountingAndTheBudget) {
  Outcome r = run_shell(std::string(SPARKDOC_BIN) + " bw --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("2 x size per copy"));
  EXPECT_THAT(r.out, HasSubstr("180-192 GB/s"));
  EXPECT_THAT(r.out, HasSubstr("check --snapshot FILE"));
}

}  // namespace
}  // namespace sparkdoc
