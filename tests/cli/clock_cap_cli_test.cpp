// `--cap-clocks` of `sparkdoc clean` and `sparkdoc run` through the binary, on a fixture root
// with the in-tree fake NVML (SPARKDOC_NVML_LIBRARY), which records every lock and reset in
// SPARKDOC_FAKE_NVML_CALLS: the dry run, the option's forms and refusals, the cap journaled and
// reset by `clean --restore`, a run that caps for its command and puts back what it found, and
// the journal of a SIGKILLed run. No test reaches a real GPU or the system's NVML.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../sys/temp_tree.h"
#include "../tune/fake_machine.h"
#include "golden.h"
#include "shell.h"

extern char** environ;

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::Outcome;
using testing::run_shell;
using testing::slurp;
using tune::testing::FakeMachine;

constexpr const char* kGb10 = "GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c";
const std::string kSet = std::string("nvmlDeviceSetGpuLockedClocks ") + kGb10;
const std::string kReset = std::string("nvmlDeviceResetGpuLockedClocks ") + kGb10 + " SUCCESS";

bool is_root() {
  return ::geteuid() == 0;
}

std::string gpu_fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/gpu/" + name;
}

// A fake machine (tests/tune/fake_machine.h, with a small idle meminfo) whose GPU is the fake
// NVML answering from `fixture`.
class FakeGpuMachine {
 public:
  explicit FakeGpuMachine(std::string fixture = gpu_fixture("gb10.json"))
      : fixture_(std::move(fixture)) {
    machine_.tree().write("proc/meminfo",
                          "MemTotal:       127600748 kB\nMemFree:        116012344 kB\n"
                          "MemAvailable:   118566368 kB\nCached:           3900012 kB\n"
                          "SwapTotal:              0 kB\nSwapFree:               0 kB\n");
    calls_ = logs_.path() + "/calls";
  }
  const std::string& root() const { return machine_.path(); }
  std::string journal() const { return machine_.journal().path; }
  const std::string& calls_file() const { return calls_; }
  const sys::testing::TempTree& logs() const { return logs_; }
  // gb10.json with `errors` injected on its device.
  void inject(const nlohmann::json& errors) {
    std::ifstream in(gpu_fixture("gb10.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["nvml"]["devices"][0]["errors"] = errors;
    logs_.write("fixture.json", j.dump());
    fixture_ = logs_.path() + "/fixture.json";
  }
  std::string env() const {
    return std::string("SPARKDOC_NVML_LIBRARY=") + SPARKDOC_FAKE_NVML +
           " SPARKDOC_FAKE_GPU_FIXTURE=" + fixture_ + " SPARKDOC_FAKE_NVML_CALLS=" + calls_ + " ";
  }
  void export_env() const {
    setenv("SPARKDOC_NVML_LIBRARY", SPARKDOC_FAKE_NVML, 1);
    setenv("SPARKDOC_FAKE_GPU_FIXTURE", fixture_.c_str(), 1);
    setenv("SPARKDOC_FAKE_NVML_CALLS", calls_.c_str(), 1);
  }
  // sparkdoc ARGS on this machine, through the fake NVML.
  Outcome sparkdoc(const std::string& args) const {
    return run_shell(env() + SPARKDOC_BIN + " " + args + " --root " + root());
  }
  // sparkdoc run ARGS -- COMMAND, with a log folder of its own.
  Outcome run(const std::string& args, const std::string& command) {
    std::string log = logs_.path() + "/log" + std::to_string(++runs_);
    return run_shell(env() + SPARKDOC_BIN + " run --root " + root() +
                     " --no-preflight --no-watch --log-dir " + log + " " + args + " -- " + command);
  }
  std::string last_log() const { return logs_.path() + "/log" + std::to_string(runs_); }
  std::vector<std::string> calls() const {
    std::ifstream in(calls_);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

 private:
  FakeMachine machine_;
  sys::testing::TempTree logs_;
  std::string fixture_;
  std::string calls_;
  int runs_ = 0;
};

// Whether `pid` runs: there, and not a zombie its new parent has not reaped yet.
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

nlohmann::json line_of(const std::string& path, const std::string& type) {
  std::ifstream in(path);
  nlohmann::json found;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == type) found = j;
  }
  return found;
}

TEST(CapClocksCli, TheDryRunSaysWhatItWouldLockAndLocksNothing) {
  FakeGpuMachine m;
  Outcome r = m.sparkdoc("clean --cap-clocks");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(" 6. GPU clock cap                   would   lock the GPU clocks to "
                               "300-2200 MHz, journaled first"));
  EXPECT_THAT(r.out, HasSubstr(std::string(kGb10) + " (NVIDIA GB10):"));
  EXPECT_THAT(m.calls(), IsEmpty());
  EXPECT_FALSE(fs::exists(m.journal()));
}

// The value only after '=': the flag alone takes no next word (here --json).
TEST(CapClocksCli, TheFlagAloneIsTheFieldsCapAndTakesNoNextWord) {
  FakeGpuMachine m;
  for (const auto& [flag, min, max] :
       {std::tuple{"--cap-clocks", 300, 2200}, std::tuple{"--cap-clocks=2000", 300, 2000},
        std::tuple{"--cap-clocks=210,1800", 210, 1800}}) {
    SCOPED_TRACE(flag);
    Outcome r = run_shell(m.env() + SPARKDOC_BIN + " clean " + flag + " --json --root " + m.root() +
                          " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    const auto& step = j["steps"][5];
    EXPECT_EQ(step["step"], "clock_cap");
    EXPECT_EQ(step["state"], "would");
    ASSERT_EQ(step["clock_locks"].size(), 1u);
    EXPECT_EQ(step["clock_locks"][0]["uuid"], kGb10);
    EXPECT_EQ(step["clock_locks"][0]["min_mhz"], min);
    EXPECT_EQ(step["clock_locks"][0]["max_mhz"], max);
  }
}

TEST(CapClocksCli, UsageErrorsSayWhy) {
  FakeGpuMachine m;
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"clean --cap-clocks=2200,300", "MIN 2200 MHz is above MAX 300 MHz"},
                        Case{"clean --cap-clocks=fast", "is not a number of MHz"},
                        Case{"clean --cap-clocks=300", "under 500 MHz"},
                        Case{"clean --cap-clocks --restore", "--restore stands alone"},
                        Case{"clean --cap-clocks --no-gpu", "--no-gpu leaves out"}}) {
    SCOPED_TRACE(c.args);
    Outcome r = m.sparkdoc(c.args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.says));
  }
  Outcome run = m.run("--cap-clocks=1,2,3", "true");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("--cap-clocks takes MIN,MAX"));
  EXPECT_THAT(m.calls(), IsEmpty());
}

TEST(CapClocksCli, ARecordedSnapshotIsPlannedForItsGpu) {
  std::string snapshots = std::string(SPARKDOC_FIXTURES) + "/snapshots/";
  Outcome gb10 = run_shell(std::string(SPARKDOC_BIN) + " clean --cap-clocks --snapshot " +
                           snapshots + "gb10-healthy-ngc.json");
  EXPECT_EQ(gb10.status, 0) << gb10.out;
  EXPECT_THAT(gb10.out, HasSubstr("GPU-5c1f0a2e-7d4b-4f7e-9a51-0c2d8e6b3f10 (NVIDIA GB10):"));
  EXPECT_THAT(gb10.out, HasSubstr("near 90 W can switch off"));
  Outcome h200 = run_shell(std::string(SPARKDOC_BIN) + " clean --cap-clocks --snapshot " +
                           snapshots + "h200-idle.json");
  EXPECT_EQ(h200.status, 0) << h200.out;
  EXPECT_THAT(h200.out, HasSubstr("GPU clock cap                   skip    cannot cap"));
  EXPECT_THAT(h200.out, HasSubstr("--cap-clocks=300,1900"));
}

// The system's NVML on a fixture root would change this machine's GPU: only a dry run here,
// which says it would not.
TEST(CapClocksCli, AFixtureRootWithTheSystemsNvmlIsNotCapped) {
  FakeGpuMachine m;
  Outcome r = run_shell("env -u SPARKDOC_NVML_LIBRARY " + std::string(SPARKDOC_BIN) +
                        " clean --cap-clocks --root " + m.root());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot cap the GPU clocks: not on a fixture root: the"));
  EXPECT_THAT(r.out, HasSubstr("system's NVML would change this machine's GPU"));
}

// Without root neither command locks anything: a clear refusal (exit 2) before NVML is asked.
// As root (CI) the binary runs as nobody through setpriv.
TEST(CapClocksCli, WithoutRootNothingIsLocked) {
  FakeGpuMachine m;
  std::string prefix;
  if (is_root()) {
    if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "setpriv not available";
    prefix = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
    fs::permissions(m.root(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(m.logs().path(), fs::perms::all);
  }
  for (const std::string& args :
       {std::string("clean --yes --cap-clocks --root ") + m.root(),
        "run --no-preflight --cap-clocks --root " + m.root() + " -- sh -c 'echo ran'"}) {
    SCOPED_TRACE(args);
    Outcome r =
        run_shell("cd " + m.logs().path() + " && " + m.env() + prefix + SPARKDOC_BIN + " " + args);
    if (is_root() && r.out.find("Permission denied") != std::string::npos) {
      GTEST_SKIP() << "nobody cannot run the test binary here: " << r.out;
    }
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr("needs root"));
    EXPECT_THAT(r.out, Not(HasSubstr("\nran\n")));
  }
  EXPECT_THAT(m.calls(), IsEmpty());
}

TEST(CapClocksCli, CleanLocksJournaledAndRestoreResets) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeGpuMachine m;
  Outcome r = m.sparkdoc("clean --yes --cap-clocks");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("GPU clock cap                   done    the GPU is locked to "
                               "300-2200 MHz, journaled"));
  EXPECT_THAT(r.out, HasSubstr("run `sparkdoc clean --restore` after training"));
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS"));
  EXPECT_THAT(slurp(m.journal()), HasSubstr(R"("op":"gpu_clocks","uuid":")" + std::string(kGb10)));

  Outcome notice = run_shell(m.env() + SPARKDOC_BIN + " check --no-gpu --only G3 --root " +
                             m.root() + " 2>&1 >/dev/null | cat");
  EXPECT_THAT(notice.out, HasSubstr("sparkdoc: the GPU clock cap and the values set by `sparkdoc "
                                    "clean --yes --cap-clocks=300,2200` are still in place"));

  Outcome restore = m.sparkdoc("clean --restore");
  EXPECT_EQ(restore.status, 0) << restore.out;
  EXPECT_THAT(restore.out, HasSubstr("reset the clocks of " + std::string(kGb10) +
                                     " (NVIDIA GB10) to the driver's default"));
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS", kReset));
  EXPECT_FALSE(fs::exists(m.journal()));
}

TEST(CapClocksCli, ARangeAboveTheGpusClocksFailsAndChangesNothing) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeGpuMachine m(gpu_fixture("h200.json"));
  Outcome r = m.sparkdoc("clean --yes --cap-clocks");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("GPU clock cap                   FAILED  cannot cap"));
  EXPECT_THAT(r.out, HasSubstr("highest clock, 1980 MHz"));
  EXPECT_THAT(m.calls(), IsEmpty());
  EXPECT_FALSE(fs::exists(m.journal()));
}

TEST(CapClocksCli, NvmlsRefusalFailsTheStepAndSaysSudo) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeGpuMachine m;
  m.inject({{"nvmlDeviceSetGpuLockedClocks", "NO_PERMISSION"}});
  Outcome r = m.sparkdoc("clean --yes --cap-clocks");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("NVML_ERROR_NO_PERMISSION (4): Insufficient Permissions:"));
  EXPECT_THAT(r.out, HasSubstr("needs root; run it with"));
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 NO_PERMISSION"));
  // Nothing stayed changed: no journal to restore.
  EXPECT_FALSE(fs::exists(m.journal()));
}

TEST(CapClocksCli, RunCapsForTheCommandAndResetsAtItsEnd) {
  if (!is_root()) GTEST_SKIP() << "--cap-clocks needs root (CI runs as root)";
  FakeGpuMachine m;
  Outcome r = m.run("--cap-clocks", "cat " + m.calls_file());
  EXPECT_EQ(r.status, 0) << r.out;
  // What the command saw: the lock in place.
  EXPECT_THAT(r.out, HasSubstr(kSet + " 300 2200 SUCCESS\n"));
  EXPECT_THAT(r.out, HasSubstr("sparkdoc run: clocks of " + std::string(kGb10) +
                               " driver default -> 300-2200 MHz (journaled"));
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS", kReset));
  EXPECT_FALSE(fs::exists(m.journal()));
  auto start = line_of(m.last_log() + "/run.jsonl", "run_start");
  ASSERT_EQ(start["tuned"].size(), 1u) << start;
  EXPECT_EQ(start["tuned"][0]["path"], kGb10);
  EXPECT_EQ(start["tuned"][0]["new"], "300-2200 MHz");
  auto end = line_of(m.last_log() + "/run.jsonl", "run_end");
  ASSERT_EQ(end["restored"].size(), 1u) << end;
  EXPECT_EQ(end["restored"][0]["path"], kGb10);
  EXPECT_TRUE(end["restored"][0]["ok"].get<bool>());
}

// `clean --yes --cap-clocks` before the launch: the same cap is left as it is; another one is
// set for the command, and clean's is put back at its end, for `clean --restore` later.
TEST(CapClocksCli, RunKeepsTheCapCleanSetAndPutsItBack) {
  if (!is_root()) GTEST_SKIP() << "--cap-clocks needs root (CI runs as root)";
  FakeGpuMachine m;
  ASSERT_EQ(m.sparkdoc("clean --yes --cap-clocks").status, 0);
  Outcome same = m.run("--cap-clocks", "true");
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_THAT(same.out, HasSubstr("already capped to 300-2200 MHz by `sparkdoc clean`"));
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS"));

  Outcome lower = m.run("--cap-clocks=2000", "true");
  EXPECT_EQ(lower.status, 0) << lower.out;
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS", kSet + " 300 2000 SUCCESS",
                                     kSet + " 300 2200 SUCCESS"));
  ASSERT_TRUE(fs::exists(m.journal()));
  // The journal now holds that run's line too; clean's cap is still the one in place.
  Outcome again = m.run("--cap-clocks", "true");
  EXPECT_THAT(again.out, HasSubstr("already capped to 300-2200 MHz by `sparkdoc clean`"));
  EXPECT_EQ(m.calls().size(), 3u);
  Outcome restore = m.sparkdoc("clean --restore");
  EXPECT_EQ(restore.status, 0) << restore.out;
  EXPECT_EQ(m.calls().back(), kReset);
  EXPECT_FALSE(fs::exists(m.journal()));
}

// A SIGKILL of sparkdoc runs nothing on the way out: the journal lets `clean --restore` reset
// the clocks once the command is gone.
TEST(CapClocksCli, AfterASigkilledRunRestoreResetsTheClocks) {
  if (!is_root()) GTEST_SKIP() << "--cap-clocks needs root (CI runs as root)";
  FakeGpuMachine m;
  m.export_env();
  std::string ready = m.logs().path() + "/ready";
  std::vector<std::string> argv;
  std::istringstream words(SPARKDOC_BIN);
  for (std::string word; words >> word;) argv.push_back(word);
  std::vector<std::string> args = {
      "run",        "--root",       m.root(),    "--no-preflight",
      "--no-watch", "--cap-clocks", "--log-dir", m.logs().path() + "/log",
      "--",         "sh",           "-c",        "echo $$ > " + ready + "; exec sleep 60"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (auto& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string out = m.logs().path() + "/out";
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, ptrs.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  bool journaled = false;
  for (int i = 0; i < 400 && !journaled; ++i) {
    journaled = fs::exists(ready) && fs::file_size(ready) > 0 &&
                slurp(m.journal()).find(R"("op":"command")") != std::string::npos;
    if (!journaled) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(journaled) << slurp(out);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  pid_t command = std::stoi(slurp(ready));
  ::kill(command, SIGKILL);
  for (int i = 0; i < 400 && alive(command); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS"));  // nothing ran on the way out

  Outcome restore = m.sparkdoc("clean --restore");
  EXPECT_EQ(restore.status, 0) << restore.out;
  EXPECT_THAT(m.calls(), ElementsAre(kSet + " 300 2200 SUCCESS", kReset));
  EXPECT_FALSE(fs::exists(m.journal()));
  unsetenv("SPARKDOC_NVML_LIBRARY");
  unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  unsetenv("SPARKDOC_FAKE_NVML_CALLS");
}

}  // namespace
}  // namespace sparkdoc
