// The acceptance test of the journal (issue 4): a child process journals and changes values on
// a fake machine and is SIGKILLed between the journal write and the restore; the restore then
// brings every original value back. The child says through a pipe when it is inside that
// window, so the kill lands there every time, not by timing luck.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "fake_machine.h"
#include "tune/journal.h"
#include "tune/ownership.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {
namespace {

using testing::FakeMachine;
using testing::FakeSwap;

enum class Window {
  kAfterChanges,             // every change made, the restore never came
  kBetweenJournalAndChange,  // the last line written and fsync'ed, its change not made yet
};

// Runs in the child: journals and changes, tells the parent, then waits to be killed. Exits
// with a status the parent reports when something fails before the window.
[[noreturn]] void child(const FakeMachine& m, Window window, int ready_fd) {
  auto journal = JournalWriter::open(m.journal(), m.euid(), testing::test_session());
  if (!journal) ::_exit(10);
  if (!set_tunable(*journal, m.root(), Tunable::kMinFreeKbytes, kLoadMinFreeKbytes)) ::_exit(11);
  if (!set_tunable(*journal, m.root(), Tunable::kVfsCachePressure, kLoadVfsCachePressure)) {
    ::_exit(12);
  }
  if (window == Window::kBetweenJournalAndChange) {
    if (!journal->record_set("/proc/sys/vm/swappiness", "60", "10")) ::_exit(13);
  } else if (!set_tunable(*journal, m.root(), Tunable::kSwappiness, 10)) {
    ::_exit(14);
  }
  char c = 'k';
  if (::write(ready_fd, &c, 1) != 1) ::_exit(15);
  for (;;) ::pause();
}

// Forks the child, waits for its signal, kills it with SIGKILL and reaps it. Not under
// qemu-user, whose forked child of a threaded test process spins before it writes a byte.
void run_and_kill(const FakeMachine& m, Window window) {
  if (const char* emulator = std::getenv("SPARKDOC_TEST_EMULATOR")) {
    GTEST_SKIP() << "under " << emulator << ", whose forked children hang";
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    child(m, window, fds[1]);
  }
  ::close(fds[1]);
  char c = 0;
  ssize_t n = ::read(fds[0], &c, 1);
  ::close(fds[0]);
  if (n != 1) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    FAIL() << "the child ended before the window, status " << WEXITSTATUS(status);
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(Crash, SigkillAfterTheChangesThenRestoreBringsBackEveryOriginal) {
  FakeMachine m;
  run_and_kill(m, Window::kAfterChanges);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(m.vm("min_free_kbytes"), "1048576\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "500\n");
  EXPECT_EQ(m.vm("swappiness"), "10\n");
  EXPECT_TRUE(unrestored_journal_notice(m.root(), 0, "", ""));

  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->complete());
  EXPECT_EQ(r->values.size(), 3u);
  EXPECT_EQ(m.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(m.vm("swappiness"), "60\n");
  EXPECT_FALSE(std::filesystem::exists(m.journal().path));
  EXPECT_FALSE(unrestored_journal_notice(m.root(), 0, "", ""));
}

TEST(Crash, SigkillBetweenJournalWriteAndChangeThenRestoreBringsBackEveryOriginal) {
  FakeMachine m;
  run_and_kill(m, Window::kBetweenJournalAndChange);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(m.vm("min_free_kbytes"), "1048576\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "500\n");
  EXPECT_EQ(m.vm("swappiness"), "60\n");  // journaled, never changed

  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->complete());
  EXPECT_EQ(m.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(m.vm("swappiness"), "60\n");
  EXPECT_FALSE(std::filesystem::exists(m.journal().path));
}

// A crash in the middle of writing a line (power loss: the kernel had part of it) leaves an
// unterminated last line; the restore reports it and still completes.
TEST(Crash, TornLastLineIsReportedAndTheRestoreCompletes) {
  FakeMachine m;
  run_and_kill(m, Window::kAfterChanges);
  if (::testing::Test::IsSkipped()) return;
  {
    std::FILE* f = std::fopen(m.journal().path.c_str(), "a");
    ASSERT_NE(f, nullptr);
    std::fputs(R"({"new":"9","old":"100","op":"set","path":"/proc/sys/vm/vfs_cache_pre)", f);
    std::fclose(f);
  }
  FakeSwap swap;
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->truncated_bytes, 0u);
  EXPECT_TRUE(r->complete());
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(m.vm("min_free_kbytes"), "45166\n");
}

}  // namespace
}  // namespace sparkdoc::tune
