// `sparkdoc report` of a log with samples and no events (issue 18: one that ended at 2.5 GB
// available read "No events"): its samples are judged again by watch's detectors, and a note
// says so; a log with events keeps the run's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "shell.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr double kTotal = 130663165952.0;

// A DGX Spark's watch log whose memory available falls from 100 GB to 2.5 GB over 40 s.
std::string falling_log(bool with_event) {
  std::string text =
      "{\"type\":\"header\",\"sparkdoc_version\":\"0.1.0\",\"started\":\"2026-11-29T10:15:00Z\","
      "\"interval_s\":1.0,\"host\":\"spark-01\",\"platform\":\"dgx-spark\",\"gpus\":[{\"index\":"
      "0,\"name\":\"NVIDIA GB10\",\"power_limit_w\":null}]}\n";
  for (int i = 0; i <= 40; ++i) {
    double available = 100e9 - (100e9 - 2.5e9) * i / 40.0;
    text += nlohmann::json{{"type", "sample"},
                           {"ts", 1795947300.0 + i},
                           {"gpus", {{{"index", 0}, {"power_w", 40.0}, {"temp_c", 50}}}},
                           {"mem",
                            {{"total_bytes", kTotal},
                             {"available_bytes", available},
                             {"cached_bytes", 4e9},
                             {"anon_bytes", kTotal - available - 4e9}}}}
                .dump() +
            "\n";
    if (with_event && i == 20) {
      text +=
          "{\"type\":\"event\",\"ts\":1795947320.0,\"kind\":\"new_gpu_process\",\"severity\":"
          "\"info\",\"gpu\":0,\"message\":\"python (pid 7) opened a CUDA context\"}\n";
    }
  }
  return text;
}

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("report_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  testing::Outcome report(const std::string& log_text, const std::string& args) {
    std::ofstream(dir_ / "watch.jsonl") << log_text;
    return testing::run_shell_stdout(std::string(SPARKDOC_BIN) + " report " +
                                     (dir_ / "watch.jsonl").string() + " " + args);
  }
  fs::path dir_;
};

TEST_F(ReportCli, ALogWithoutEventsIsJudgedAgainFromItsSamples) {
  auto r = report(falling_log(false), "--json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["events"].empty()) << r.out;
  bool pressure = false;
  for (const auto& e : j["events"]) pressure |= e["kind"] == "memory_pressure";
  EXPECT_TRUE(pressure) << r.out;
  EXPECT_THAT(j["notes"].dump(), HasSubstr("The log holds no events; its 41 samples were judged "
                                           "again by this sparkdoc's watch detectors"));
  auto text = report(falling_log(false), "");
  EXPECT_THAT(text.out, HasSubstr("memory_pressure"));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("No events")));
}

TEST_F(ReportCli, ALogWithEventsKeepsTheRunsOwn) {
  auto r = report(falling_log(true), "--json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["events"].size(), 1u) << r.out;
  EXPECT_EQ(j["events"][0]["kind"], "new_gpu_process");
  EXPECT_THAT(j["notes"].dump(), ::testing::Not(HasSubstr("judged again")));
}

}  // namespace
}  // namespace sparkdoc
