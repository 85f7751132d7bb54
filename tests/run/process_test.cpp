#include "run/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../sys/temp_tree.h"

namespace sparkdoc::run {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> plain_env() {
  return {"PATH=/usr/bin:/bin"};
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(Process, SignalNames) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(1000), "signal 1000");
}

TEST(Process, ExitStatusAsAShellReportsIt) {
  int status = 0;
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(3);
  ::waitpid(pid, &status, 0);
  ExitInfo exited = decode_exit(status);
  EXPECT_EQ(exited.status, 3);
  EXPECT_EQ(exited.code, 3);
  EXPECT_FALSE(exited.signal);
  pid = ::fork();
  if (pid == 0) {
    ::raise(SIGKILL);
    ::_exit(0);
  }
  ::waitpid(pid, &status, 0);
  ExitInfo killed = decode_exit(status);
  EXPECT_EQ(killed.status, 137);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_FALSE(killed.code);
}

TEST(Process, IoPriorityValueIsBestEffortSeven) {
  // ionice -c 2 -n 7: class 2 in the top bits, level 7.
  EXPECT_EQ(best_effort_io_priority(7), (2 << 13) | 7);
}

TEST(Process, TheCommandGetsItsGroupEnvironmentPriorityAndOomScore) {
  SignalGate gate;
  sys::testing::TempTree tree;
  std::string out = tree.path() + "/out";
  ChildSpec spec;
  // Its own pid equals its process group; what it sees is written for the test to read.
  spec.argv = {"sh", "-c",
               "echo \"$$ $(cut -d' ' -f5 /proc/$$/stat) $SPARKDOC_TEST_VALUE "
               "$(cat /proc/$$/oom_score_adj)\" > " +
                   out};
  spec.env = {"PATH=/usr/bin:/bin", "SPARKDOC_TEST_VALUE=seen"};
  spec.oom_score_adj = 300;
  auto started = start_child(spec, gate.outside_mask());
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_FALSE(started->exec_failed);
  EXPECT_EQ(started->io_priority, "best-effort 7");
  EXPECT_EQ(started->oom_score_adj, 300);
  EXPECT_EQ(decode_exit(wait_for(started->pid)).status, 0);
  std::ifstream in(out);
  std::string pid, pgrp, value, oom;
  in >> pid >> pgrp >> value >> oom;
  EXPECT_EQ(pid, std::to_string(started->pid));
  EXPECT_EQ(pgrp, pid);
  EXPECT_EQ(value, "seen");
  EXPECT_EQ(oom, "300");
}

// The I/O priority is the kernel's to read back (ioprio_get), from a command that is certainly
// still running: one that has exited has lost its I/O context and reads as the default.
TEST(Process, TheKernelReportsTheCommandsIoPriority) {
  SignalGate gate;
  ChildSpec spec;
  spec.argv = {"sleep", "30"};
  spec.env = {"PATH=/usr/bin:/bin"};
  auto started = start_child(spec, gate.outside_mask());
  ASSERT_TRUE(started) << started.error().message;
  ASSERT_FALSE(started->exec_failed);
  long prio = ::syscall(SYS_ioprio_get, 1, started->pid);
  ::kill(started->pid, SIGKILL);
  EXPECT_EQ(decode_exit(wait_for(started->pid)).status, 128 + SIGKILL);
  EXPECT_EQ(prio, best_effort_io_priority(7));
}

TEST(Process, ACommandThatIsNotThereIs127) {
  SignalGate gate;
  ChildSpec spec;
  spec.argv = {"/nonexistent/sparkdoc-no-such-program"};
  spec.env = plain_env();
  auto started = start_child(spec, gate.outside_mask());
  ASSERT_TRUE(started);
  ASSERT_TRUE(started->exec_failed);
  EXPECT_EQ(started->exec_failed->exit_status, 127);
  EXPECT_THAT(started->exec_failed->message, HasSubstr("No such file or directory"));
  EXPECT_EQ(started->pid, -1);
}

TEST(Process, AFileThatIsNotExecutableIs126) {
  SignalGate gate;
  sys::testing::TempTree tree;
  tree.write("script", "#!/bin/sh\nexit 0\n");
  ChildSpec spec;
  spec.argv = {tree.path() + "/script"};
  spec.env = plain_env();
  auto started = start_child(spec, gate.outside_mask());
  ASSERT_TRUE(started);
  ASSERT_TRUE(started->exec_failed);
  EXPECT_EQ(started->exec_failed->exit_status, 126);
}

TEST(Process, TheGateTakesSignalsOneAtATime) {
  SignalGate gate;
  EXPECT_EQ(gate.wait(std::chrono::milliseconds(10)), 0);
  ::kill(::getpid(), SIGHUP);
  EXPECT_EQ(gate.take_pending_forwarded(), SIGHUP);
  EXPECT_EQ(gate.take_pending_forwarded(), 0);
  ::kill(::getpid(), SIGTERM);
  EXPECT_EQ(gate.wait(std::chrono::milliseconds(1000)), SIGTERM);
}

TEST(Process, TheCommandDoesNotInheritTheBlockedSignals) {
  SignalGate gate;
  ChildSpec spec;
  // SigBlk of the command: the mask sparkdoc had before the gate (none blocked here). grep
  // reads its own status after `exec`: reading the shell's from a forked grep raced with the
  // shell blocking signals around its fork.
  spec.argv = {"sh", "-c", "exec grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status"};
  spec.env = plain_env();
  spec.low_io_priority = false;
  auto started = start_child(spec, gate.outside_mask());
  ASSERT_TRUE(started);
  ASSERT_FALSE(started->exec_failed);
  EXPECT_EQ(decode_exit(wait_for(started->pid)).status, 0);
}

}  // namespace
}  // namespace sparkdoc::run
