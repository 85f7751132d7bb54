// End-to-end tests of the sparkdoc binary: exit codes, the line contract, usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/fs.h"
#include "core/strings.h"
#include "shell.h"

namespace sparkdoc {
namespace {

using testing::Outcome;
using testing::run_shell;
using testing::run_shell_stdout;

Outcome run(const std::string& args) {
  return run_shell(std::string(SPARKDOC_BIN) + " " + args);
}
Outcome run_stdout(const std::string& args) {
  return run_shell_stdout(std::string(SPARKDOC_BIN) + " " + args);
}

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name;
}

// The acceptance rule for any machine, including one with no GPU, driver or Python: exit 0
// or 1, one line per G1..G10 in order, then the S lines, and every SKIP says why.
void expect_line_contract(const std::string& out) {
  std::vector<std::string> ids;
  std::regex line_re(R"(^([GS][0-9]+) (PASS|FAIL|WARN|SKIP|INFO): (.*)$)");
  for (auto line : lines(out)) {
    std::string s(line);
    std::smatch m;
    if (!std::regex_match(s, m, line_re)) continue;
    ids.push_back(m[1]);
    if (m[2] == "SKIP") {
      EXPECT_GT(m[3].length(), 5u) << "SKIP without a reason: " << s;
    }
  }
  ASSERT_GE(ids.size(), 10u) << out;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], "G" + std::to_string(i + 1));
  for (size_t i = 10; i < ids.size(); ++i) EXPECT_EQ(ids[i][0], 'S') << ids[i];
}

TEST(Cli, LiveCheckFollowsTheLineContract) {
  Outcome r = run("check --color never");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  expect_line_contract(r.out);
}

// No driver, no Python, nothing on PATH: still one line per check, exit 0 or 1, and every
// SKIP says why.
TEST(Cli, NoDriverNoPythonStillFollowsTheLineContract) {
  Outcome r =
      run_shell("env -i PATH=/nonexistent " + std::string(SPARKDOC_BIN) + " check --color never");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  expect_line_contract(r.out);
  EXPECT_THAT(r.out, ::testing::HasSubstr("G1 SKIP: "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("no Python environment found"));
}

// The whole live path through the in-tree fake NVML and CUDA libraries: a GB10 answers as the
// fixture says, and the report calls it a DGX Spark.
TEST(Cli, FakeGb10DriverIsJudgedAsADgxSpark) {
  std::string env = std::string("SPARKDOC_NVML_LIBRARY=") + SPARKDOC_FAKE_NVML +
                    " SPARKDOC_CUDA_LIBRARY=" + SPARKDOC_FAKE_CUDA +
                    " SPARKDOC_FAKE_GPU_FIXTURE=" + SPARKDOC_FIXTURES + "/gpu/gb10.json ";
  Outcome r = run_shell(env + SPARKDOC_BIN + " check --color never");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  expect_line_contract(r.out);
  EXPECT_THAT(r.out, ::testing::HasSubstr("check: dgx-spark"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("G7 PASS: SM121 (12.1) detected"));
  Outcome s = run_shell(env + SPARKDOC_BIN + " snapshot");
  ASSERT_EQ(s.status, 0) << s.out;
  auto j = nlohmann::json::parse(s.out.substr(s.out.find('{')));
  EXPECT_EQ(j["gpu"]["nvml"]["devices"][0]["name"], "NVIDIA GB10");
  EXPECT_EQ(j["gpu"]["nvml"]["devices"][0]["memory"]["absent"], "not_supported");
  EXPECT_EQ(j["gpu"]["cuda"]["devices"][0]["integrated"], true);
}

// Issue 21 item 10: under `sudo -E` the user's SPARKDOC_NVML_LIBRARY and --root come along; a
// root process takes them only from what root owns and no one else can write.
TEST(Cli, RootRefusesAUsersLibraryAndRootTree) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a file to another user";
  std::string dir = ::testing::TempDir() + "users_lib_" + std::to_string(::getpid());
  ASSERT_EQ(
      run_shell("rm -rf " + dir + " && mkdir -m 0755 " + dir + " && cp " + SPARKDOC_FAKE_NVML +
                " " + dir + "/libnvidia-ml.so.1 && chown 65534 " + dir +
                "/libnvidia-ml.so.1 && mkdir -m 0777 " + dir + "/tree && mkdir " + dir + "/sp")
          .status,
      0);
  std::string env = "SPARKDOC_NVML_LIBRARY=" + dir +
                    "/libnvidia-ml.so.1 SPARKDOC_FAKE_GPU_FIXTURE=" + SPARKDOC_FIXTURES +
                    "/gpu/gb10.json ";
  Outcome r = run_shell(env + SPARKDOC_BIN + " snapshot --site-packages " + dir + "/sp");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["gpu"]["nvml"]["absent"], "no_permission") << j["gpu"]["nvml"];
  EXPECT_THAT(j["gpu"]["nvml"]["detail"].get<std::string>(),
              ::testing::HasSubstr("refused: sparkdoc runs as root, and " + dir +
                                   "/libnvidia-ml.so.1 belongs to uid 65534, not root"));
  Outcome tree = run_shell(std::string(SPARKDOC_BIN) + " check --no-gpu --root " + dir + "/tree");
  EXPECT_EQ(tree.status, 2) << tree.out;
  EXPECT_THAT(tree.out, ::testing::HasSubstr("is writable by everyone"));
  run_shell("rm -rf " + dir);
}

TEST(Cli, NoCommandMeansCheck) {
  Outcome r = run("--no-gpu --color never");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  expect_line_contract(r.out);
}

TEST(Cli, SnapshotThenCheckSnapshotJudgesTheSame) {
  std::string file = std::string(SPARKDOC_BINARY_DIR) + "/cli_test_snapshot.json";
  Outcome s = run("snapshot --no-gpu -o " + file);
  ASSERT_EQ(s.status, 0) << s.out;
  Outcome a = run("check --snapshot " + file + " --json");
  ASSERT_TRUE(a.status == 0 || a.status == 1) << a.out;
  auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["findings"].size(), j["findings"].size());
  EXPECT_EQ(j["source"], "cli_test_snapshot.json");
}

TEST(Cli, HealthySparkIsReady) {
  Outcome r = run("check --color never --snapshot " + fixture("gb10-healthy-ngc.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  expect_line_contract(r.out);
  EXPECT_THAT(r.out, ::testing::HasSubstr("dgx-spark"));
}

TEST(Cli, CudaTwelveTorchOnSparkIsBlocked) {
  Outcome r = run("check --color never --snapshot " + fixture("gb10-bare-pip-cu12.json"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("G1 FAIL"));
}

TEST(Cli, StrictMakesWarningsBlock) {
  Outcome r = run("check --strict --color never --snapshot " +
                  fixture("gb10-page-cache-40gb.json") + " --need 70GB");
  EXPECT_EQ(r.status, 1) << r.out;
}

TEST(Cli, EnvReportIsWritten) {
  std::string file = std::string(SPARKDOC_BINARY_DIR) + "/cli_test_env.json";
  Outcome r = run("check --snapshot " + fixture("gb10-healthy-ngc.json") + " --env-report " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  auto text = read_text(file);
  ASSERT_TRUE(text);
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["platform"], "dgx-spark");
  EXPECT_TRUE(j["checks"].contains("G10"));
}

TEST(Cli, OnlySelectsChecks) {
  Outcome r =
      run("check --only G3,g7 --color never --snapshot " + fixture("gb10-healthy-ngc.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("G3 "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("G7 "));
  EXPECT_THAT(r.out, ::testing::Not(::testing::HasSubstr("G1 ")));
}

// `snapshot --diff` was every reading, timings and meminfo jitter included, and exit 0 on any
// difference (issue 18): it is `sparkdoc compare` now, and --readings lists the readings.
TEST(Cli, SnapshotDiffIsCompareAndReadingsListsTheRest) {
  Outcome same =
      run("snapshot --diff " + fixture("h200-busy.json") + " " + fixture("h200-busy.json"));
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_THAT(same.out, ::testing::HasSubstr("No reading differs between the 2 nodes"));
  Outcome compared = run_stdout("snapshot --diff " + fixture("gb10-healthy-ngc.json") + " " +
                                fixture("h200-busy.json"));
  Outcome direct =
      run_stdout("compare " + fixture("gb10-healthy-ngc.json") + " " + fixture("h200-busy.json"));
  EXPECT_EQ(compared.status, direct.status);
  EXPECT_EQ(compared.out, direct.out);
  EXPECT_THAT(compared.out, ::testing::HasSubstr("BREAKS"));

  Outcome two = run("snapshot --diff " + fixture("h200-idle.json") + " " +
                    fixture("h200-busy.json") + " --readings");
  EXPECT_EQ(two.status, 1) << two.out;
  EXPECT_THAT(two.out, ::testing::StartsWith("~ /gpu/nvml/devices/0/"));
  EXPECT_THAT(two.out, ::testing::HasSubstr(" -> "));
  Outcome json = run_stdout("snapshot --diff " + fixture("h200-idle.json") + " " +
                            fixture("h200-busy.json") + " --readings --json");
  EXPECT_EQ(json.status, 1);
  auto parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json.out;
  EXPECT_FALSE(parsed["differences"].empty());
  Outcome none = run("snapshot --diff " + fixture("h200-busy.json") + " " +
                     fixture("h200-busy.json") + " --readings");
  EXPECT_EQ(none.status, 0) << none.out;

  EXPECT_EQ(run("snapshot --diff " + fixture("h200-idle.json") + " /nonexistent/b.json").status, 2);
  EXPECT_EQ(run("snapshot --diff " + fixture("h200-idle.json") + " /nonexistent/b.json --readings")
                .status,
            2);
  EXPECT_EQ(run("snapshot --json").status, 2);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("check --only G99").status, 2);
  EXPECT_EQ(run("check --need lots").status, 2);
  // A bare number was 70 bytes and passed G3 on any machine (issue 18).
  const auto bare = run("check --need 70 --snapshot " + fixture("gb10-healthy-ngc.json"));
  EXPECT_EQ(bare.status, 2) << bare.out;
  EXPECT_THAT(bare.out, ::testing::HasSubstr("--need: '70' has no unit: write 70GB"));
  EXPECT_EQ(run("check --snapshot /nonexistent/file.json").status, 2);
  // --site-packages with --snapshot was dropped in silence (issue 18): it is refused, by name.
  const auto live_only =
      run("check --snapshot " + fixture("h200-idle.json") + " --site-packages /tmp");
  EXPECT_EQ(live_only.status, 2) << live_only.out;
  EXPECT_THAT(live_only.out,
              ::testing::HasSubstr("--site-packages shapes a live capture and cannot change a "
                                   "recorded snapshot"));
  const auto no_cache = run("check --snapshot " + fixture("h200-idle.json") + " --no-cache");
  EXPECT_EQ(no_cache.status, 2) << no_cache.out;
  EXPECT_THAT(no_cache.out, ::testing::HasSubstr("--no-cache shapes a live capture"));
  const auto unknown = run("frobnicate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.out, ::testing::HasSubstr(
                               "unknown command 'frobnicate'; the commands are check, explain"));
  EXPECT_THAT(run("''").out, ::testing::HasSubstr("unknown command ''"));
  EXPECT_EQ(run("''").status, 2);
  EXPECT_EQ(run("check --snapshot " + std::string(SPARKDOC_FIXTURES) + "/../CMakeLists.txt").status,
            2);
}

// CLI11's own errors are said as sparkdoc's are: the command first, then where to read more.
TEST(Cli, ParseErrorsNameTheCommand) {
  const auto bad = run("plan --seq 0 x");
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.out, ::testing::HasSubstr("sparkdoc plan: --seq: Value 0 not in range"));
  EXPECT_THAT(bad.out, ::testing::HasSubstr("(sparkdoc plan --help)"));
  const auto extra = run("check --no-such-flag");
  EXPECT_EQ(extra.status, 2);
  EXPECT_THAT(extra.out, ::testing::StartsWith("sparkdoc check: "));
}

TEST(Cli, VersionSaysWhatABugReportNeeds) {
  const auto v = run("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_THAT(v.out, ::testing::StartsWith("sparkdoc "));
  EXPECT_THAT(v.out, ::testing::HasSubstr("built with "));
  // The commit (12 hex digits, or "unknown" outside a git checkout) and a UTC build date.
  EXPECT_THAT(v.out,
              ::testing::ContainsRegex("\\(commit ([0-9a-f]{12}|unknown), built "
                                       "[0-9]{4}-[0-9]{2}-[0-9]{2}, (x86_64|aarch64) Linux"));
  EXPECT_THAT(v.out, ::testing::HasSubstr("snapshot schema 2"));
  EXPECT_THAT(v.out, ::testing::HasSubstr("never linked"));
}

TEST(Cli, HelpNamesACommandsOptions) {
  const auto all = run("help");
  EXPECT_EQ(all.status, 0);
  EXPECT_THAT(all.out, ::testing::HasSubstr("Usage: sparkdoc [OPTIONS] SUBCOMMAND"));
  // The list holds each command's one-line summary; the long description is for `help NAME`.
  EXPECT_THAT(all.out, ::testing::HasSubstr(
                           "  bw                          Measure memory bandwidth (G5)\n"));
  EXPECT_THAT(all.out, ::testing::Not(::testing::HasSubstr("Examples:")));
  EXPECT_THAT(run("help plan").out, ::testing::HasSubstr("Examples:"));
  const auto one = run("help run");
  EXPECT_EQ(one.status, 0);
  EXPECT_THAT(one.out, ::testing::HasSubstr("--drop-cache-every"));
  EXPECT_EQ(run("help frobnicate").status, 2);
}

// An environment named by a wrong path is a usage error that says what is wrong with it, not
// an environment guessed from the path's parent folders.
TEST(Cli, AWrongPythonOrSitePackagesPathIsAUsageError) {
  using ::testing::HasSubstr;
  const std::string not_python = std::string(SPARKDOC_FIXTURES) + "/../CMakeLists.txt";
  for (const std::string command : {"check", "snapshot", "audit"}) {
    Outcome missing = run(command + " --no-gpu --python /nonexistent/bin/python3");
    EXPECT_EQ(missing.status, 2) << command << missing.out;
    EXPECT_THAT(missing.out, HasSubstr("--python /nonexistent/bin/python3: no such file"));
    Outcome text = run(command + " --no-gpu --python " + not_python);
    EXPECT_EQ(text.status, 2) << command << text.out;
    EXPECT_THAT(text.out, HasSubstr("not an executable file or an environment's folder"));
    Outcome folder = run(command + " --no-gpu --site-packages /nonexistent/site-packages");
    EXPECT_EQ(folder.status, 2) << command << folder.out;
    EXPECT_THAT(folder.out, HasSubstr("is not a folder that can be read"));
  }
}

TEST(Cli, ExplainByIdAndBySymptom) {
  Outcome id = run("explain G3");
  EXPECT_EQ(id.status, 0);
  EXPECT_THAT(id.out, ::testing::HasSubstr("Fix:"));
  // The fix that works inside the training script is named where the symptom is explained.
  EXPECT_THAT(id.out, ::testing::HasSubstr("sparkdoc.patch_transformers"));
  EXPECT_THAT(id.out, ::testing::HasSubstr("sparkdoc.memory_guard"));
  Outcome symptom = run("explain \"undefined symbol at import\"");
  EXPECT_EQ(symptom.status, 0);
  EXPECT_THAT(symptom.out, ::testing::HasSubstr("G1"));
  EXPECT_THAT(symptom.out, ::testing::HasSubstr("(on: undefined, symbol"));
  // A lint rule answers too, and text no entry is about is said to match nothing.
  Outcome rule =
      run("explain \"ValueError: NemotronHForCausalLM does not support gradient "
          "checkpointing\"");
  EXPECT_EQ(rule.status, 0);
  EXPECT_THAT(rule.out, ::testing::HasSubstr("L20"));
  Outcome none = run("explain \"the printer is out of paper\"");
  EXPECT_EQ(none.status, 2);
  EXPECT_THAT(none.out, ::testing::HasSubstr("no entry matches"));
}

TEST(Cli, ExplainAndTheCheckListSpeakJson) {
  auto id = nlohmann::json::parse(run_stdout("explain G3 --json").out);
  EXPECT_EQ(id["id"], "G3");
  EXPECT_EQ(id["kind"], "check");
  EXPECT_FALSE(id["fix"].get<std::string>().empty());
  auto symptom =
      nlohmann::json::parse(run_stdout("explain \"undefined symbol at import\" --json").out);
  ASSERT_FALSE(symptom["matches"].empty());
  EXPECT_EQ(symptom["matches"][0]["id"], "G1");
  EXPECT_EQ(run("explain \"the printer is out of paper\" --json").status, 2);
  auto list = nlohmann::json::parse(run_stdout("check --list --json").out);
  EXPECT_EQ(list["checks"][0]["id"], "G1");
  EXPECT_EQ(list["checks"].size(),
            nlohmann::json::parse(run_stdout("explain --json").out)["checks"].size());
}

// A report that could not be written is not a success.
TEST(Cli, AnOutputThatCannotBeWrittenExitsTwo) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  // stderr to the pipe, stdout to the full device.
  Outcome full =
      testing::run_shell_stdout(std::string(SPARKDOC_BIN) + " explain G3 2>&1 >/dev/full");
  EXPECT_EQ(full.status, 2) << full.out;
  EXPECT_THAT(full.out, ::testing::HasSubstr("the output could not be written"));
  EXPECT_EQ(run("explain G3 > /dev/null").status, 0);
}

// check --lint judges the job with the machine; a file of the job it cannot read (a FIFO named
// train.py) is said, not dropped unsaid, and does not hang it.
TEST(Cli, CheckLintJoinsTheJobAndSaysWhatItCouldNotRead) {
  const std::string dir =
      ::testing::TempDir() + "/sparkdoc-check-lint-" + std::to_string(::getpid());
  ASSERT_EQ(
      run_shell("rm -rf " + dir + " && mkdir -p " + dir + " && mkfifo " + dir +
                "/train.py && printf 'docker run --privileged --ipc=host img python3 x.py\\n' > " +
                dir + "/run.sh")
          .status,
      0);
  Outcome r = run("check --snapshot " + fixture("gb10-healthy-ngc.json") + " --lint " + dir);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("sparkdoc check: --lint: not read: train.py"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("L22 INFO: run.sh:1: --privileged"));
  EXPECT_EQ(run("check --snapshot " + fixture("gb10-healthy-ngc.json") + " --lint " + dir + "/nope")
                .status,
            2);
  run_shell("rm -rf " + dir);
}

TEST(Cli, ListShowsEveryCheck) {
  Outcome r = run("check --list");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, ::testing::HasSubstr("G10"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("S1"));
}

}  // namespace
}  // namespace sparkdoc
