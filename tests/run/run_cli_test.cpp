// `sparkdoc run` through the binary: the cleaned environment and the exit status, SIGTERM
// reaching the command, the journal of a SIGKILLed sparkdoc restored by the next start, the
// tuning restored on the way out (also with stdout a closed pipe), the page-cache drops, the
// watch sidecar, the preflight, and log folders that a link planted by another user cannot
// redirect. Every kernel value is a file under a fake root in a temporary folder, never this machine's.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "../sys/temp_tree.h"
#include "../tune/fake_machine.h"
#include "golden.h"
#include "shell.h"
#include "sys/proc_stat.h"
#include "tune/journal.h"
#include "tune/tunables.h"

extern char** environ;

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Outcome;
using testing::run_shell;
using testing::slurp;
using tune::testing::FakeMachine;

bool is_root() {
  return ::geteuid() == 0;
}

// sparkdoc with `args` (which start with a space), run from `dir`.
Outcome sparkdoc_in(const std::string& dir, const std::string& args) {
  return run_shell("cd " + dir + " && " + SPARKDOC_BIN + args);
}

// Waits until `path` exists and is not empty, up to 20 s.
bool wait_for_file(const std::string& path) {
  for (int i = 0; i < 400; ++i) {
    std::error_code ec;
    if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Starts sparkdoc with these arguments, file actions and attributes; returns its pid (-1 when
// it did not start).
pid_t spawn_sparkdoc_with(const std::vector<std::string>& args,
                          const posix_spawn_file_actions_t* actions,
                          const posix_spawnattr_t* attr) {
  // SPARKDOC_BIN is a command prefix: the binary, or an emulator and its options before it.
  std::vector<std::string> argv;
  std::istringstream words(SPARKDOC_BIN);
  for (std::string word; words >> word;) argv.push_back(word);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (auto& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), actions, attr, ptrs.data(), environ);
  return rc == 0 ? pid : -1;
}

// Starts sparkdoc with these arguments, its output to `log`; returns its pid.
pid_t spawn_sparkdoc(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = spawn_sparkdoc_with(args, &actions, nullptr);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Every value back at 000 §6's defaults and no journal left.
void expect_restored(const FakeMachine& root) {
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_FALSE(fs::exists(root.journal().path));
}

nlohmann::json last_line_of(const std::string& path, const std::string& type) {
  std::ifstream in(path);
  std::string line;
  nlohmann::json found;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == type) found = j;
  }
  return found;
}

// The acceptance line as written: `sparkdoc run -- sh -c 'env; exit 3'`, from a shell whose
// environment holds every kind of variable seed 001 removes.
TEST(RunCli, EnvIsCleanedAndTheExitStatusComesBack) {
  sys::testing::TempTree tree;
  Outcome r = run_shell(
      "cd " + tree.path() +
      " && env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF -u TOKENIZERS_PARALLELISM "
      "WORLD_SIZE=2 RANK=1 LOCAL_RANK=0 MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 "
      "NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0 OMPI_COMM_WORLD_RANK=0 MPI_LOCALRANKID=0 "
      "ACCELERATE_USE_FSDP=1 SPARKDOC_KEEP_ME=yes " +
      std::string(SPARKDOC_BIN) + " run -- sh -c 'env; exit 3'");
  if (r.status == 1 && r.out.find("preflight blocked the run") != std::string::npos) {
    GTEST_SKIP() << "this machine fails the preflight, so the command is rightly not run:\n"
                 << r.out;
  }
  EXPECT_EQ(r.status, 3) << r.out;
  for (const char* gone :
       {"\nWORLD_SIZE=", "\nRANK=", "\nLOCAL_RANK=", "\nMASTER_ADDR=", "\nMASTER_PORT=",
        "\nNCCL_DEBUG=", "\nNCCL_SOCKET_IFNAME=", "\nOMPI_COMM_WORLD_RANK=", "\nMPI_LOCALRANKID=",
        "\nACCELERATE_USE_FSDP=1"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(gone))) << gone;
  }
  for (const char* set :
       {"\nACCELERATE_USE_FSDP=0\n", "\nACCELERATE_USE_DEEPSPEED=0\n",
        "\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n",
        "\nTOKENIZERS_PARALLELISM=false\n", "\nSPARKDOC_KEEP_ME=yes\n"}) {
    EXPECT_THAT(r.out, HasSubstr(set)) << set;
  }
  EXPECT_THAT(r.out, HasSubstr("removed LOCAL_RANK MASTER_ADDR MASTER_PORT MPI_LOCALRANKID "
                               "NCCL_DEBUG NCCL_SOCKET_IFNAME OMPI_COMM_WORLD_RANK RANK "
                               "WORLD_SIZE"));
  EXPECT_THAT(r.out, HasSubstr("ended        exit 3"));
  // The run log beside it says the same.
  ASSERT_TRUE(fs::exists(tree.path() + "/sparkdoc-runs"));
  auto dir = fs::directory_iterator(tree.path() + "/sparkdoc-runs")->path();
  auto start = last_line_of(dir / "run.jsonl", "run_start");
  auto end = last_line_of(dir / "run.jsonl", "run_end");
  EXPECT_EQ(start["env_removed"].size(), 9u);
  EXPECT_EQ(start["env_set"]["TOKENIZERS_PARALLELISM"], "false");
  EXPECT_EQ(end["exit_status"], 3);
}

TEST(RunCli, UsersOwnDefaultsAreKept) {
  sys::testing::TempTree tree;
  Outcome r = run_shell("cd " + tree.path() + " && env PYTORCH_CUDA_ALLOC_CONF=backend:native " +
                        "TOKENIZERS_PARALLELISM=true " + SPARKDOC_BIN +
                        " run --no-preflight -- sh -c 'env'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\nPYTORCH_CUDA_ALLOC_CONF=backend:native\n"));
  EXPECT_THAT(r.out, HasSubstr("\nTOKENIZERS_PARALLELISM=true\n"));
  EXPECT_THAT(r.out, HasSubstr("kept your PYTORCH_CUDA_ALLOC_CONF TOKENIZERS_PARALLELISM"));
}

TEST(RunCli, DistributedKeepsTheLaunchVariables) {
  sys::testing::TempTree tree;
  Outcome r = run_shell("cd " + tree.path() + " && env WORLD_SIZE=2 NCCL_DEBUG=INFO " +
                        SPARKDOC_BIN + " run --no-preflight --distributed -- sh -c 'env'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\nWORLD_SIZE=2\n"));
  EXPECT_THAT(r.out, HasSubstr("\nNCCL_DEBUG=INFO\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("ACCELERATE_USE_FSDP=0")));
}

// SIGTERM to sparkdoc reaches the command, which traps it, leaves a marker, and exits 7;
// sparkdoc exits 7 too.
TEST(RunCli, SigtermReachesTheCommandAndItsStatusComesBack) {
  sys::testing::TempTree tree;
  std::string ready = tree.path() + "/ready";
  std::string marker = tree.path() + "/marker";
  std::string script = "trap 'echo term > " + marker + "; exit 7' TERM; echo up > " + ready +
                       "; while :; do sleep 0.1; done";
  pid_t pid = spawn_sparkdoc(
      {"run", "--no-preflight", "--log-dir", tree.path() + "/log", "--", "sh", "-c", script},
      tree.path() + "/out");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_file(ready)) << slurp(tree.path() + "/out");
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status)) << slurp(tree.path() + "/out");
  EXPECT_EQ(WEXITSTATUS(status), 7) << slurp(tree.path() + "/out");
  EXPECT_EQ(slurp(marker), "term\n");
  EXPECT_THAT(slurp(tree.path() + "/out"), HasSubstr("forwarded SIGTERM to the command"));
  auto end = last_line_of(tree.path() + "/log/run.jsonl", "run_end");
  EXPECT_EQ(end["signals_forwarded"], nlohmann::json::array({"SIGTERM"}));
  EXPECT_EQ(end["exit_status"], 7);
}

// A command that does not trap the signal dies of it: 128 + 15, as a shell reports it.
TEST(RunCli, ACommandKilledByASignalIs128PlusTheSignal) {
  sys::testing::TempTree tree;
  Outcome r = sparkdoc_in(tree.path(), " run --no-preflight -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(r.status, 143) << r.out;
  EXPECT_THAT(r.out, HasSubstr("killed by SIGTERM (status 143)"));
}

TEST(RunCli, ACommandThatIsNotThereIs127) {
  sys::testing::TempTree tree;
  Outcome r = sparkdoc_in(tree.path(), " run --no-preflight -- /nonexistent/train.py");
  EXPECT_EQ(r.status, 127) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot run /nonexistent/train.py: No such file or directory"));
}

TEST(RunCli, UsageErrors) {
  EXPECT_EQ(run_shell(std::string(SPARKDOC_BIN) + " run").status, 2);
  EXPECT_EQ(run_shell(std::string(SPARKDOC_BIN) + " run --oom-score-adj 5000 -- true").status, 2);
  EXPECT_EQ(run_shell(std::string(SPARKDOC_BIN) + " run --no-watch -- ''").status, 2);
  EXPECT_EQ(run_shell(std::string(SPARKDOC_BIN) + " run --drop-cache-every soon -- true").status,
            2);
  EXPECT_EQ(run_shell(std::string(SPARKDOC_BIN) + " run --watch-interval 0 -- true").status, 2);
  // Below what the watch sidecar takes: refused before the command starts (issue 21 item 11).
  auto fast = run_shell(std::string(SPARKDOC_BIN) + " run --watch-interval 1ms -- true");
  EXPECT_EQ(fast.status, 2) << fast.out;
  EXPECT_NE(fast.out.find("--watch-interval: at least 50ms"), std::string::npos) << fast.out;
}

// G10 FAILs for two nodes with tensor parallelism in the command: nothing runs without --force.
TEST(RunCli, PreflightFailStopsTheRunUnlessForced) {
  sys::testing::TempTree tree;
  std::string command =
      " -- sh -c 'echo ran > " + tree.path() + "/ran' x --nnodes 2 --tensor-parallel-size 2";
  Outcome blocked = sparkdoc_in(tree.path(), " run --no-gpu" + command);
  EXPECT_EQ(blocked.status, 1) << blocked.out;
  EXPECT_THAT(blocked.out, HasSubstr("G10 FAIL: 2 nodes"));
  EXPECT_THAT(blocked.out, HasSubstr("preflight blocked the run"));
  EXPECT_FALSE(fs::exists(tree.path() + "/ran"));
  Outcome forced = sparkdoc_in(tree.path(), " run --no-gpu --force" + command);
  EXPECT_EQ(forced.status, 0) << forced.out;
  EXPECT_THAT(forced.out, HasSubstr("running anyway (--force)"));
  EXPECT_TRUE(fs::exists(tree.path() + "/ran"));
}

// The script the command names is linted before it starts: a seed mistake that breaks training
// (lora_dropout on an MoE's experts, L9) stops the run; --force runs it anyway.
TEST(RunCli, ALintFailInTheScriptStopsTheRunUnlessForced) {
  sys::testing::TempTree tree;
  std::ofstream(tree.path() + "/train.py") << R"(import sys
open("ran", "w").write("ran")
if len(sys.argv) > 5:  # the training below never runs in this test
    from unsloth import FastModel
    model, tokenizer = FastModel.from_pretrained(model_name="Qwen/Qwen3.5-35B-A3B")
    model = FastModel.get_peft_model(
        model,
        r=16,
        lora_dropout=0.05,
        target_modules=["q_proj", "gate_proj", "up_proj", "down_proj"],
    )
)";
  const std::string command = " -- python3 train.py";
  Outcome blocked = sparkdoc_in(tree.path(), " run --no-gpu" + command);
  EXPECT_EQ(blocked.status, 1) << blocked.out;
  EXPECT_THAT(blocked.out, HasSubstr("L9 FAIL: train.py:9: lora_dropout=0.05"));
  EXPECT_THAT(blocked.out, HasSubstr("preflight blocked the run"));
  EXPECT_FALSE(fs::exists(tree.path() + "/ran"));
  Outcome forced = sparkdoc_in(tree.path(), " run --no-gpu --force" + command);
  EXPECT_EQ(forced.status, 0) << forced.out;
  EXPECT_THAT(forced.out, HasSubstr("running anyway (--force)"));
  EXPECT_TRUE(fs::exists(tree.path() + "/ran"));
}

TEST(RunCli, WithoutAWatchSidecarItSaysSoAndRuns) {
  sys::testing::TempTree tree;
  Outcome r = sparkdoc_in(tree.path(), " run --no-preflight --watch-exe /nonexistent/sparkdoc-watch -- true");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("no telemetry"));
}

// A stand-in for `sparkdoc watch`: writes a header and a sample every 0.1 s to --log until
// it is told to stop, so the end summary has telemetry to read.
TEST(RunCli, TheSidecarsLogFeedsTheSummary) {
  sys::testing::TempTree tree;
  tree.write(
      "watch.sh",
      "#!/bin/sh\n"
      "echo \"$@\" > " +
          tree.path() +
          "/sidecar-args\n"
          "log=$3\n"
          "echo '{\"type\":\"header\",\"host\":\"fake\",\"platform\":\"other\",\"gpus\":"
          "[{\"index\":0,\"name\":\"Fake GPU\",\"power_limit_w\":300}]}' > \"$log\"\n"
          "i=0\n"
          "trap 'exit 0' TERM\n"
          "while :; do\n"
          "  i=$((i+1))\n"
          "  ts=$(date +%s.%N)\n"
          "  echo \"{\\\"type\\\":\\\"sample\\\",\\\"ts\\\":$ts,\\\"gpus\\\":[{\\\"index\\\":0,"
          "\\\"power_w\\\":250,\\\"mem_used_bytes\\\":$((i*1000000000))}],\\\"mem\\\":"
          "{\\\"total_bytes\\\":100000000000,\\\"available_bytes\\\":60000000000}}\" >> \"$log\"\n"
          "  sleep 0.1\n"
          "done\n");
  fs::permissions(tree.path() + "/watch.sh", fs::perms::owner_all);
  Outcome r = sparkdoc_in(
      tree.path(), " run --no-preflight --json --watch-interval 0.1s --log-dir " + tree.path() +
                       "/log --watch-exe " + tree.path() + "/watch.sh -- sleep 1.2");
  ASSERT_EQ(r.status, 0) << r.out;
  // It works in the log folder, so the log it makes lands there whatever the path names.
  EXPECT_EQ(slurp(tree.path() + "/sidecar-args"),
            "watch --log watch.jsonl --interval 0.1 --quiet\n");
  auto json_start = r.out.rfind("\n{");
  ASSERT_NE(json_start, std::string::npos) << r.out;
  auto j = nlohmann::json::parse(r.out.substr(json_start + 1), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_GE(j["samples"].get<int>(), 3);
  EXPECT_GE(j["gpu_memory"]["peak_bytes"].get<uint64_t>(), 3000000000u);
  EXPECT_EQ(j["gpu_memory"]["source"], "device");
  EXPECT_EQ(j["host_memory"]["peak_used_bytes"], 40000000000u);
  // The sidecar was stopped: nothing is left writing the log.
  auto size = fs::file_size(tree.path() + "/log/watch.jsonl");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(fs::file_size(tree.path() + "/log/watch.jsonl"), size);
  // And `sparkdoc report` reads the folder.
  Outcome report = run_shell(std::string(SPARKDOC_BIN) + " report " + tree.path() + "/log -o " +
                             tree.path() + "/run.html");
  EXPECT_EQ(report.status, 0) << report.out;
  EXPECT_THAT(slurp(tree.path() + "/run.html"), HasSubstr("limit 300 W"));
  // run wrote the same page into its folder when the command ended, and said where.
  EXPECT_EQ(j["report"], tree.path() + "/log/report.html");
  std::string page = slurp(tree.path() + "/log/report.html");
  EXPECT_THAT(page, HasSubstr("limit 300 W"));
  EXPECT_THAT(page, HasSubstr("sparkdoc report of log"));
}

// The page is written when the command fails too, and the closing summary names it.
TEST(RunCli, AFailedRunLeavesItsReportPageInTheRunFolder) {
  sys::testing::TempTree tree;
  Outcome r = sparkdoc_in(tree.path(),
                          " run --no-preflight --watch-exe /nonexistent/sparkdoc-watch "
                          "--log-dir " +
                              tree.path() + "/log -- sh -c 'exit 3'");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("report       " + tree.path() + "/log/report.html"));
  std::string page = slurp(tree.path() + "/log/report.html");
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("exit status"));
}

TEST(RunCli, TuningIsRestoredWhenTheCommandEnds) {
  if (!is_root()) GTEST_SKIP() << "--tune-vm needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  Outcome r =
      run_shell(std::string(SPARKDOC_BIN) + " run --root " + root.path() +
                " --no-preflight --tune-vm --log-dir " + tree.path() + "/log -- sh -c 'cat " +
                root.path() + "/proc/sys/vm/min_free_kbytes; kill -TERM $$'");
  EXPECT_EQ(r.status, 143) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\n1048576\n"));  // what the command saw
  EXPECT_THAT(r.out, HasSubstr("restored     /proc/sys/vm/min_free_kbytes = 45166"));
  expect_restored(root);
}

// `sparkdoc run --tune-vm` on the fake machine, its command a shell that writes its pid to
// TREE/ready and sleeps; returns sparkdoc's pid once the command runs (-1 when it never did).
// Waits until the journal names the command the run started (written just after it starts).
bool wait_for_journaled_command(const FakeMachine& root) {
  for (int i = 0; i < 400; ++i) {
    if (slurp(root.journal().path).find(R"("op":"command")") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

pid_t start_tuned_run(const FakeMachine& root, const sys::testing::TempTree& tree) {
  std::string ready = tree.path() + "/ready";
  pid_t pid = spawn_sparkdoc(
      {"run", "--root", root.path(), "--no-preflight", "--tune-vm", "--log-dir",
       tree.path() + "/log", "--", "sh", "-c", "echo $$ > " + ready + "; exec sleep 60"},
      tree.path() + "/out");
  if (pid > 0 && (!wait_for_file(ready) || !wait_for_journaled_command(root))) {
    ::kill(pid, SIGKILL);
    wait_status(pid);
    return -1;
  }
  return pid;
}

// What a plain `sparkdoc check` on `root` prints on stderr (the journal notice, if any).
Outcome journal_notice_of_check(const FakeMachine& root) {
  return run_shell(std::string(SPARKDOC_BIN) + " check --no-gpu --only G3 --root " + root.path() +
                   " 2>&1 >/dev/null | cat");
}

// SIGKILLs an orphaned command (the test's own child no more) and waits until it is dead: gone,
// or a zombie its new parent has not reaped yet.
void kill_and_wait_dead(pid_t pid) {
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 400; ++i) {
    auto stat = sys::read_proc_stat(Root(), pid);
    if (!stat || stat->state == 'Z') return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The acceptance test: a sparkdoc that journaled its tuning is SIGKILLed while the command
// runs; the next `sparkdoc run` restores the journal before anything else, and says why.
TEST(RunCli, AfterASigkilledSparkdocTheNextStartRestoresTheJournal) {
  if (!is_root()) GTEST_SKIP() << "--tune-vm needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  std::string ready = tree.path() + "/ready";
  pid_t pid = start_tuned_run(root, tree);
  ASSERT_GT(pid, 0) << slurp(tree.path() + "/out");
  ASSERT_EQ(root.vm("min_free_kbytes"), "1048576\n");
  ASSERT_TRUE(fs::exists(root.journal().path));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = wait_status(pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // The orphaned command is the test's to end.
  pid_t command = std::stoi(slurp(ready));
  kill_and_wait_dead(command);
  EXPECT_EQ(root.vm("min_free_kbytes"), "1048576\n");  // nothing ran on the way out

  Outcome next = run_shell(std::string(SPARKDOC_BIN) + " run --root " + root.path() +
                           " --no-preflight --log-dir " + tree.path() + "/log2 -- true");
  EXPECT_EQ(next.status, 0) << next.out;
  EXPECT_THAT(next.out, HasSubstr("(pid " + std::to_string(pid) + ", `run --tune-vm -- sh -c"));
  EXPECT_THAT(next.out, HasSubstr("ended without restoring what it changed: it was killed"));
  EXPECT_THAT(next.out, HasSubstr("restored /proc/sys/vm/min_free_kbytes 1048576 -> 45166"));
  EXPECT_THAT(next.out, HasSubstr("restored /proc/sys/vm/vfs_cache_pressure 500 -> 100"));
  EXPECT_THAT(next.out, HasSubstr("journal removed"));
  expect_restored(root);
}

// A killed run's command runs on in its own process group, with the values set for it: the
// next start leaves them while it runs, and restores them once it has ended.
TEST(RunCli, TheValuesStayWhileAKilledRunsCommandRuns) {
  if (!is_root()) GTEST_SKIP() << "--tune-vm needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  pid_t pid = start_tuned_run(root, tree);
  ASSERT_GT(pid, 0) << slurp(tree.path() + "/out");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  wait_status(pid);
  pid_t command = std::stoi(slurp(tree.path() + "/ready"));
  // Each run gets a log folder of its own.
  auto next_run = [&](const std::string& log) {
    return std::string(SPARKDOC_BIN) + " run --root " + root.path() +
           " --no-preflight --no-watch --log-dir " + tree.path() + "/" + log + " -- true";
  };
  Outcome while_running = run_shell(next_run("log2"));
  EXPECT_EQ(while_running.status, 0) << while_running.out;
  EXPECT_THAT(while_running.out,
              HasSubstr("was killed, but the command it started (sh, pid " +
                        std::to_string(command) + ") still runs: the values it changed stay"));
  EXPECT_EQ(root.vm("min_free_kbytes"), "1048576\n");
  EXPECT_TRUE(fs::exists(root.journal().path));
  // Any other command says whose values they are, rather than urging a restore.
  Outcome check = journal_notice_of_check(root);
  EXPECT_THAT(check.out, HasSubstr("stay for the command it started (sh, pid " +
                                   std::to_string(command) + "), which still runs"));

  kill_and_wait_dead(command);
  Outcome after = run_shell(next_run("log3"));
  EXPECT_EQ(after.status, 0) << after.out;
  EXPECT_THAT(after.out, HasSubstr("ended without restoring what it changed"));
  expect_restored(root);
}

// A second `sparkdoc run` while the first still runs leaves the first one's journal alone; the
// first restores it when a SIGTERM ends its command.
TEST(RunCli, TheJournalOfARunningSparkdocIsLeftToIt) {
  if (!is_root()) GTEST_SKIP() << "--tune-vm needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  pid_t first = start_tuned_run(root, tree);
  ASSERT_GT(first, 0) << slurp(tree.path() + "/out");
  Outcome second = run_shell(std::string(SPARKDOC_BIN) + " run --root " + root.path() +
                             " --no-preflight --log-dir " + tree.path() + "/log2 -- true");
  EXPECT_EQ(second.status, 0) << second.out;
  EXPECT_THAT(second.out, HasSubstr("belongs to sparkdoc pid " + std::to_string(first) +
                                    ", which is still running"));
  EXPECT_EQ(root.vm("min_free_kbytes"), "1048576\n");
  // A running run's values are its own business: other commands print no notice.
  Outcome check = journal_notice_of_check(root);
  EXPECT_THAT(check.out, Not(HasSubstr("clean --restore")));
  ASSERT_EQ(::kill(first, SIGTERM), 0);
  int status = wait_status(first);
  ASSERT_TRUE(WIFEXITED(status)) << slurp(tree.path() + "/out");
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << slurp(tree.path() + "/out");
  expect_restored(root);
}

// `sparkdoc clean --yes --tune-vm` before the launch is the recipe's order (000 §6): its values
// are meant for the load, so `run` keeps them and leaves its journal to `clean --restore`.
TEST(RunCli, AJournalLeftByCleanStaysForTheRun) {
  if (!is_root()) GTEST_SKIP() << "the journal is root's (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  {
    auto journal = tune::JournalWriter::open(root.journal(), 0,
                                             tune::testing::test_session("clean --yes --tune-vm"));
    ASSERT_TRUE(journal) << journal.error().message;
    ASSERT_TRUE(tune::set_tunable(*journal, root.root(), tune::Tunable::kMinFreeKbytes,
                                  tune::kLoadMinFreeKbytes));
  }
  Outcome r = run_shell(std::string(SPARKDOC_BIN) + " run --root " + root.path() +
                        " --no-preflight --tune-vm --log-dir " + tree.path() + "/log -- cat " +
                        root.path() + "/proc/sys/vm/min_free_kbytes");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("values changed by `sparkdoc clean --yes --tune-vm`"));
  EXPECT_THAT(r.out, HasSubstr("stay changed for this run"));
  EXPECT_THAT(r.out, HasSubstr("\n1048576\n"));
  // This run's own change (vfs_cache_pressure) went back; clean's stays, journaled.
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(root.vm("min_free_kbytes"), "1048576\n");
  ASSERT_TRUE(fs::exists(root.journal().path));
  Outcome restore = run_shell(std::string(SPARKDOC_BIN) + " clean --restore --root " + root.path());
  EXPECT_EQ(restore.status, 0) << restore.out;
  expect_restored(root);
}

TEST(RunCli, PageCacheDropsDuringTheLoadWindowUntilTheLimit) {
  if (!is_root()) GTEST_SKIP() << "--drop-cache-every needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  Outcome r = run_shell(std::string(SPARKDOC_BIN) + " run --root " + root.path() +
                        " --no-preflight --drop-cache-every 1s --drop-cache-for 2s --log-dir " +
                        tree.path() + "/log -- sleep 3.5");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(root.vm("drop_caches"), "3\n");
  EXPECT_THAT(r.out, HasSubstr("cache drops  2 in the load window; stopped: time limit 2.0 s"));
  auto window = last_line_of(tree.path() + "/log/run.jsonl", "load_window_end");
  EXPECT_THAT(window["reason"].get<std::string>(), HasSubstr("time limit"));
}

// Root writing through a user's link: a user who can write the working folder plants, at the
// names the default run folder will take (the UTC second and sparkdoc's pid, which `exec` makes
// the shell's $$), links to a folder whose run.jsonl stands for a file root owns.
TEST(RunCli, ALinkPlantedAtTheDefaultRunFolderIsNotWrittenThrough) {
  sys::testing::TempTree tree;
  tree.write("victim/run.jsonl", "precious\n");
  tree.mkdir("sparkdoc-runs");
  fs::permissions(tree.path() + "/sparkdoc-runs", fs::perms(0755));
  const std::string plant =
      "for s in 0 1 2; do ln -s ../victim sparkdoc-runs/$(date -u -d @$(($(date +%s)+s)) "
      "+%Y%m%d-%H%M%S)-$$; done";
  Outcome r = run_shell("cd " + tree.path() + " && sh -c '" + plant + "; exec " + SPARKDOC_BIN +
                        " run --no-preflight --no-watch -- true'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(slurp(tree.path() + "/victim/run.jsonl"), "precious\n");
  // The run's log is in a folder of its own beside the links.
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(tree.path() + "/sparkdoc-runs")) {
    if (!e.is_symlink()) folders.push_back(e.path());
  }
  ASSERT_EQ(folders.size(), 1u) << r.out;
  EXPECT_EQ(last_line_of(folders[0] / "run.jsonl", "run_end")["exit_status"], 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("log " + ("sparkdoc-runs" / folders[0].filename()).string()));
}

// A --log-dir that exists is used only when it is an empty folder of this user's that nobody
// else can write; a link in it is never written through.
TEST(RunCli, AnExistingLogFolderMustBeEmptyAndPrivate) {
  sys::testing::TempTree tree;
  tree.write("victim", "precious\n");
  tree.mkdir("linked");
  fs::permissions(tree.path() + "/linked", fs::perms(0700));
  tree.symlink(tree.path() + "/victim", "linked/run.jsonl");
  tree.symlink(tree.path() + "/victim", "linked/watch.err");
  const std::string command = " -- sh -c 'echo ran >> " + tree.path() + "/ran'";
  Outcome linked = sparkdoc_in(
      tree.path(), " run --no-preflight --log-dir " + tree.path() + "/linked" + command);
  EXPECT_EQ(linked.status, 1) << linked.out;
  EXPECT_THAT(linked.out, HasSubstr("is not empty"));
  EXPECT_THAT(linked.out, HasSubstr("--log-dir"));
  EXPECT_EQ(slurp(tree.path() + "/victim"), "precious\n");

  tree.mkdir("shared");
  fs::permissions(tree.path() + "/shared", fs::perms(0777));
  Outcome shared = sparkdoc_in(
      tree.path(), " run --no-preflight --log-dir " + tree.path() + "/shared" + command);
  EXPECT_EQ(shared.status, 1) << shared.out;
  EXPECT_THAT(shared.out, HasSubstr("others can write"));
  EXPECT_FALSE(fs::exists(tree.path() + "/ran")) << "the command ran";

  tree.mkdir("empty");
  fs::permissions(tree.path() + "/empty", fs::perms(0755));
  Outcome empty = sparkdoc_in(
      tree.path(), " run --no-preflight --no-watch --log-dir " + tree.path() + "/empty" + command);
  EXPECT_EQ(empty.status, 0) << empty.out;
  EXPECT_EQ(last_line_of(tree.path() + "/empty/run.jsonl", "run_end")["exit_status"], 0);
}

TEST(RunCli, AnotherUsersLogFolderIsRefused) {
  if (!is_root()) GTEST_SKIP() << "needs root to give the folder away (CI runs as root)";
  sys::testing::TempTree tree;
  tree.mkdir("theirs");
  ASSERT_EQ(::chown((tree.path() + "/theirs").c_str(), 65534, 65534), 0);
  fs::permissions(tree.path() + "/theirs", fs::perms(0755));
  Outcome r = sparkdoc_in(
      tree.path(), " run --no-preflight --no-watch --log-dir " + tree.path() + "/theirs -- true");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("belongs to uid 65534"));
}

// Runs sparkdoc with stdout and stderr on a pipe whose reader has already gone, so every line
// it writes meets EPIPE, and SIGPIPE unless it ignores it (the signal's default is restored for
// the spawn whatever this test process has). Returns the waitpid status.
int run_into_a_closed_pipe(const std::vector<std::string>& args) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  ::close(p[0]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, p[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, p[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = spawn_sparkdoc_with(args, &actions, &attr);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(p[1]);
  return pid > 0 ? wait_status(pid) : -1;
}

// `sparkdoc run -- cmd | head`: once the reader is gone, sparkdoc's own lines fail to write;
// the command still runs with SIGPIPE at its default, and its status is sparkdoc's.
TEST(RunCli, AClosedStdoutNeitherKillsTheRunNorChangesItsStatus) {
  sys::testing::TempTree tree;
  int status = run_into_a_closed_pipe({"run", "--no-preflight", "--no-watch", "--log-dir",
                                       tree.path() + "/log", "--", "sh", "-c",
                                       "yes; echo $? > " + tree.path() + "/yes-status; exit 3"});
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(slurp(tree.path() + "/yes-status"), "141\n")
      << "the command's SIGPIPE was not the default";
  EXPECT_EQ(last_line_of(tree.path() + "/log/run.jsonl", "run_end")["exit_status"], 3);
  // The shell form: the reader goes while the command writes.
  Outcome piped = run_shell("cd " + tree.path() + " && { " + SPARKDOC_BIN +
                            " run --no-preflight --no-watch -- sh -c 'yes | head -c 1000000; "
                            "exit 3'; echo $? > status; } 2>&1 | head -c 10 >/dev/null");
  EXPECT_EQ(slurp(tree.path() + "/status"), "3\n") << piped.out;
}

TEST(RunCli, TuningIsRestoredWhenStdoutIsAClosedPipe) {
  if (!is_root()) GTEST_SKIP() << "--tune-vm needs root (CI runs as root)";
  FakeMachine root;
  sys::testing::TempTree tree;
  int status = run_into_a_closed_pipe(
      {"run", "--root", root.path(), "--no-preflight", "--no-watch", "--tune-vm", "--log-dir",
       tree.path() + "/log", "--", "sh", "-c",
       "cat " + root.path() + "/proc/sys/vm/min_free_kbytes > " + tree.path() + "/seen; exit 3"});
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(slurp(tree.path() + "/seen"), "1048576\n");  // the command ran with the values set
  expect_restored(root);
}

// Not root: the machine-changing options are refused before anything starts.
TEST(RunCli, TuningWithoutRootIsRefused) {
  std::string prefix;
  sys::testing::TempTree tree;
  if (is_root()) {
    if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "setpriv not available";
    prefix = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
    fs::permissions(tree.path(), fs::perms::all);
  }
  Outcome r = run_shell("cd " + tree.path() + " && " + prefix + SPARKDOC_BIN +
                        " run --no-preflight --tune-vm -- sh -c 'echo ran'");
  if (is_root() && r.out.find("Permission denied") != std::string::npos) {
    GTEST_SKIP() << "nobody cannot run the test binary here: " << r.out;
  }
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("needs root"));
  EXPECT_THAT(r.out, HasSubstr("Nothing was started"));
  EXPECT_THAT(r.out, Not(HasSubstr("\nran\n")));
}

}  // namespace
}  // namespace sparkdoc
