// End-to-end: strings from files and other processes reach the terminal as text, never as
// escape sequences or extra lines (issue 21 item 8). Each case plants the red-team string in one
// place a user's files reach the output (a snapshot's host name, a checkpoint's model_type and
// tensor names, a logged command line, a job file's name and contents) and reads every byte
// sparkdoc printed.
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

// Erases the line above and paints a verdict in its place.
const std::string kPaint =
    "\x1b[1A\x1b[2K\rALL CHECKS PASS\n\xc2\x9b"
    "32m";
const std::string kPaintShown = "\\x1b[1A\\x1b[2K\\rALL CHECKS PASS\\n\\u009b32m";

// No byte that steers a terminal: no control character but the line ends, no DEL, no C1.
void expect_only_text(const std::string& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    auto c = static_cast<unsigned char>(out[i]);
    ASSERT_TRUE(c >= 0x20 || c == '\n') << "control byte " << int(c) << " at " << i << " in\n"
                                        << out;
    ASSERT_NE(c, 0x7f) << out;
    if (c == 0xc2 && i + 1 < out.size()) {
      auto next = static_cast<unsigned char>(out[i + 1]);
      ASSERT_FALSE(next >= 0x80 && next <= 0x9f) << "C1 control at " << i << " in\n" << out;
    }
  }
}

class TerminalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("terminal_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  testing::Outcome sparkdoc(const std::string& args) {
    return testing::run_shell(std::string(SPARKDOC_BIN) + " " + args);
  }
  fs::path dir_;
};

TEST_F(TerminalCli, ASnapshotsHostNameIsShownNotObeyed) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/gb10-healthy-ngc.json");
  nlohmann::json snapshot = nlohmann::json::parse(in);
  snapshot["host"]["hostname"] = "spark-01" + kPaint;
  snapshot["env"]["WORLD_SIZE"] = "2" + kPaint;
  std::ofstream(dir_ / "s.json") << snapshot.dump();
  auto r = sparkdoc("check --snapshot " + (dir_ / "s.json").string());
  expect_only_text(r.out);
  EXPECT_THAT(r.out, HasSubstr("snapshot: spark-01" + kPaintShown));
  auto json = sparkdoc("check --json --snapshot " + (dir_ / "s.json").string());
  expect_only_text(json.out);
  // JSON is the same JSON: the host name reads back exactly as planted.
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["hostname"], "spark-01" + kPaint) << json.out;
}

TEST_F(TerminalCli, ACheckpointsNamesAreShownNotObeyed) {
  testing::ModelFixture m = testing::tiny_llama();
  nlohmann::json config = nlohmann::json::parse(m.config);
  config["architectures"] = {"LlamaForCausalLM" + kPaint};
  m.config = config.dump();
  testing::write_fixture(dir_ / "model", m, 1);
  auto r = sparkdoc("plan " + (dir_ / "model").string() + " --lora 8 --available 100GB");
  expect_only_text(r.out);
  EXPECT_THAT(r.out, HasSubstr("LlamaForCausalLM" + kPaintShown));
}

TEST_F(TerminalCli, ALoggedCommandIsShownNotObeyed) {
  auto run = sparkdoc("run --no-preflight --no-watch --no-ionice --oom-score-adj keep --log-dir " +
                      (dir_ / "log").string() + " -- true '" + kPaint + "'");
  ASSERT_EQ(run.status, 0) << run.out;
  expect_only_text(run.out);
  auto report = sparkdoc("report " + (dir_ / "log").string());
  expect_only_text(report.out);
  EXPECT_THAT(report.out, HasSubstr(kPaintShown)) << report.out;
}

TEST_F(TerminalCli, AJobFileIsShownNotObeyed) {
  const std::string name = "train" + std::string("\x1b[2J") + ".py";
  std::ofstream(dir_ / name) << "from transformers import AutoModel\n"
                                "m = AutoModel.from_pretrained(\"org/model" +
                                    std::string("\x1b]0;owned\x07") +
                                    "\", trust_remote_code=True)\n";
  auto r = sparkdoc("lint " + dir_.string());
  expect_only_text(r.out);
  EXPECT_THAT(r.out, HasSubstr("train\\x1b[2J.py"));
}

}  // namespace
}  // namespace sparkdoc
