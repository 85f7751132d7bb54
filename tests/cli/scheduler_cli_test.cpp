// `sparkdoc check --health-check` run as the schedulers run it: Slurm's HealthCheckProgram (and
// Prolog) through contrib/slurm/sparkdoc-health-check with no arguments and a bare environment,
// and Kubernetes node-problem-detector through the path and arguments of
// contrib/kubernetes/sparkdoc-monitor.json. A FAIL fixture and a PASS fixture each; the fixture
// is the one thing added to what the scheduler passes (SPARKDOC_HEALTH_OPTIONS for Slurm's
// wrapper, a trailing --snapshot for node-problem-detector), since a test cannot judge a live
// machine it controls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../shell.h"

namespace sparkdoc {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kFixtures = SPARKDOC_FIXTURES;
const std::string kContrib = kFixtures + "/../../contrib";
const std::string kFail = kFixtures + "/snapshots/gb10-bare-pip-cu12.json";  // G1 FAIL
const std::string kPass = kFixtures + "/snapshots/gb10-healthy-ngc.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A folder with an `scontrol` that records its arguments, one per line, as Slurm's would act.
class FakeSlurm {
 public:
  FakeSlurm() {
    dir_ = std::filesystem::temp_directory_path() /
           ("sparkdoc-slurm-" + std::to_string(::getpid()) + "-" + std::to_string(++count_));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "scontrol")
        << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" << calls() << "'\n";
    ::chmod((dir_ / "scontrol").c_str(), 0755);
  }
  ~FakeSlurm() { std::filesystem::remove_all(dir_); }
  std::string bin() const { return dir_.string(); }
  std::string calls() const { return (dir_ / "scontrol.args").string(); }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
};

// The wrapper as slurmd runs it: argv is its path alone; the environment is slurmd's few
// variables (SLURMD_NODENAME among them) and a PATH.
testing::Outcome run_as_slurm(const FakeSlurm& slurm, const std::string& snapshot) {
  return testing::run_shell_stdout("env -i PATH=" + slurm.bin() +
                                   ":/usr/bin:/bin SLURMD_NODENAME=spark-b SLURM_CONF=/dev/null "
                                   "SPARKDOC=" SPARKDOC_BIN
                                   " 'SPARKDOC_HEALTH_OPTIONS=--snapshot " +
                                   snapshot + "' " + kContrib + "/slurm/sparkdoc-health-check");
}

TEST(SlurmHealthCheck, AFailingNodeIsDrainedWithTheLineAsItsReason) {
  FakeSlurm slurm;
  testing::Outcome r = run_as_slurm(slurm, kFail);
  EXPECT_EQ(r.status, 1);
  ASSERT_THAT(r.out, StartsWith("G1 FAIL: torch 2.9.1+cu128 is built against CUDA 12.8"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  std::string line = r.out.substr(0, r.out.size() - 1);
  EXPECT_LE(line.size(), 200u);
  // The reason is "sparkdoc " and the line, cut to the same 200 bytes.
  std::string reason = "sparkdoc " + line;
  if (reason.size() > 200) reason = reason.substr(0, 197) + "...";
  EXPECT_EQ(read_file(slurm.calls()),
            "update\nNodeName=spark-b\nState=DRAIN\nReason=" + reason + "\n");
}

TEST(SlurmHealthCheck, AHealthyNodeExitsZeroAndIsLeftAlone) {
  FakeSlurm slurm;
  testing::Outcome r = run_as_slurm(slurm, kPass);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "sparkdoc OK: 16 passed, 0 warnings, 11 skipped\n");
  EXPECT_FALSE(std::filesystem::exists(slurm.calls()));
}

TEST(SlurmHealthCheck, AMissingScontrolIsSaidAndTheNodeStillFails) {
  testing::Outcome r =
      testing::run_shell("env -i PATH=/nonexistent SLURMD_NODENAME=spark-b " SPARKDOC_BIN
                         " check --health-check --drain --snapshot " +
                         kFail);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("--drain: node spark-b not drained: cannot run scontrol"));
}

TEST(SlurmHealthCheck, AnUnreadableSnapshotIsExitTwo) {
  testing::Outcome r = testing::run_shell(SPARKDOC_BIN " check --health-check --snapshot " +
                                          kFixtures + "/../CMakeLists.txt");
  EXPECT_EQ(r.status, 2);
}

// node-problem-detector execs rules[].path with rules[].args, reads the exit status (0 OK, 1 a
// problem, anything else unknown) and keeps max_output_length bytes of stdout as the message.
struct NpdRule {
  std::vector<std::string> args;
  size_t max_output = 0;
};

NpdRule npd_rule() {
  auto config = nlohmann::json::parse(read_file(kContrib + "/kubernetes/sparkdoc-monitor.json"));
  NpdRule rule;
  for (const auto& a : config.at("rules").at(0).at("args")) rule.args.push_back(a);
  rule.max_output = config.at("pluginConfig").at("max_output_length").get<size_t>();
  EXPECT_EQ(config.at("rules").at(0).at("path"), "/opt/sparkdoc/bin/sparkdoc");
  EXPECT_EQ(config.at("rules").at(0).at("condition"), config.at("conditions").at(0).at("type"));
  return rule;
}

testing::Outcome run_as_npd(const std::string& snapshot) {
  NpdRule rule = npd_rule();
  std::string command = "env -i PATH=/usr/bin:/bin " SPARKDOC_BIN;
  for (const std::string& a : rule.args) command += " '" + a + "'";
  return testing::run_shell_stdout(command + " --snapshot " + snapshot);
}

TEST(NodeProblemDetector, AFailingNodeIsAProblemWithTheFailureFirst) {
  testing::Outcome r = run_as_npd(kFail);
  EXPECT_EQ(r.status, 1);
  EXPECT_LE(r.out.size(), npd_rule().max_output + 1);  // the line and its newline
  EXPECT_THAT(r.out.substr(0, 80), StartsWith("G1 FAIL: torch 2.9.1+cu128"));
}

TEST(NodeProblemDetector, AHealthyNodeIsOk) {
  testing::Outcome r = run_as_npd(kPass);
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, StartsWith("sparkdoc OK:"));
}

}  // namespace
}  // namespace sparkdoc
