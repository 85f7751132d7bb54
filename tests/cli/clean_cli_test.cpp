// End-to-end tests of `sparkdoc mem` and `sparkdoc clean`: the dry run changes nothing, a
// non-root --yes changes nothing and says why, a run and its --restore on a fake machine, and
// `clean --restore` after a run that was SIGKILLed between its journal write and its restore.
// Every write goes to a fixture root under a temporary folder, never to this machine's /proc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../sys/temp_tree.h"
#include "core/fs.h"
#include "golden.h"
#include "shell.h"
#include "tune/journal.h"
#include "tune/tunables.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Outcome;
using testing::run_shell;

Outcome run(const std::string& args) {
  return run_shell(std::string(SPARKDOC_BIN) + " " + args);
}

using sparkdoc::testing::slurp;

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name;
}
std::string golden(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/golden/" + name;
}

// A fake machine: the vm files at 000 §6's defaults, no swap, a small idle meminfo.
class FakeRoot {
 public:
  FakeRoot() {
    tree_.write("proc/sys/vm/drop_caches", "");
    tree_.write("proc/sys/vm/min_free_kbytes", "45166\n");
    tree_.write("proc/sys/vm/vfs_cache_pressure", "100\n");
    tree_.write("proc/sys/vm/swappiness", "60\n");
    tree_.write("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
    tree_.write("proc/meminfo",
                "MemTotal:       127600748 kB\nMemFree:        116012344 kB\n"
                "MemAvailable:   118566368 kB\nBuffers:           120004 kB\n"
                "Cached:           3900012 kB\nAnonPages:        2500004 kB\n"
                "Shmem:              90000 kB\nSlab:             1900044 kB\n"
                "SReclaimable:     1100040 kB\nSwapTotal:              0 kB\n"
                "SwapFree:               0 kB\n");
  }
  const std::string& path() const { return tree_.path(); }
  std::string vm(const std::string& name) const {
    return slurp(fs::path(path()) / "proc/sys/vm" / name);
  }
  std::string journal() const { return path() + "/var/lib/sparkdoc/journal"; }
  const sys::testing::TempTree& tree() const { return tree_; }
  // Lets another user into the tree and lets them write the vm files: a refusal then proves
  // sparkdoc refused, not the file permissions.
  void open_to_everyone() const {
    for (const auto& e : fs::recursive_directory_iterator(path())) {
      ::chmod(e.path().c_str(), e.is_directory() ? 0777 : 0666);
    }
    ::chmod(path().c_str(), 0777);
  }

 private:
  sys::testing::TempTree tree_;
};

bool is_root() {
  return ::geteuid() == 0;
}

TEST(MemCli, SnapshotTextMatchesItsGolden) {
  Outcome r = run("mem --snapshot " + fixture("gb10-three-killed-containers.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, slurp(golden("mem-gb10-three-killed-containers.txt")));
}

TEST(MemCli, JsonHasThePublicKeys) {
  Outcome r = run("mem --json --snapshot " + fixture("gb10-three-killed-containers.json") +
                  " 2>/dev/null | cat");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"memory", "pressure", "gpus", "processes", "unlisted_holders", "orphaned",
                          "platform", "stoppable", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["platform"]["key"], "dgx-spark");
  EXPECT_TRUE(j["orphaned"]["likely"].get<bool>());
  EXPECT_EQ(j["processes"].size(), 2u);
}

TEST(MemCli, BadSnapshotIsAUsageError) {
  EXPECT_EQ(run("mem --snapshot /nonexistent/snap.json").status, 2);
}

TEST(CleanCli, DryRunOfASnapshotMatchesItsGolden) {
  Outcome r = run("clean --snapshot " + fixture("gb10-three-killed-containers.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, slurp(golden("clean-gb10-three-killed-containers.txt")));
}

TEST(CleanCli, ASnapshotCannotBeCarriedOut) {
  Outcome r = run("clean --yes --snapshot " + fixture("gb10-three-killed-containers.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.out, HasSubstr("cannot be carried out"));
}

TEST(CleanCli, DryRunPrintsThePlanAndChangesNothing) {
  FakeRoot root;
  Outcome r = run("clean --tune-vm --stop-known --need 10GB --root " + root.path());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("sync and drop caches            would"));
  EXPECT_THAT(r.out, HasSubstr("/proc/sys/vm/min_free_kbytes 45166 -> 1048576"));
  EXPECT_THAT(r.out, HasSubstr("/proc/sys/vm/vfs_cache_pressure 100 -> 500"));
  EXPECT_THAT(r.out, HasSubstr("Dry run: nothing was changed"));
  EXPECT_EQ(root.vm("drop_caches"), "");
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_FALSE(fs::exists(root.path() + "/var"));
}

TEST(CleanCli, DryRunJsonNamesEveryStep) {
  FakeRoot root;
  Outcome r = run("clean --json --root " + root.path() + " 2>/dev/null | cat");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& s : j["steps"]) keys.push_back(s["step"]);
  EXPECT_THAT(keys, ::testing::ElementsAre("holders", "stop_known", "stale_holders", "drop_caches",
                                           "vm_tuning", "clock_cap", "swap_reset", "cuda_context",
                                           "measure", "drop_caches_again", "verdict"));
  EXPECT_TRUE(j["dry_run"].get<bool>());
}

// Non-root --yes: a clear message, exit 2, and nothing changed. As root (CI) the binary runs as
// nobody through setpriv, on a fake machine whose files nobody could write, so only sparkdoc's
// own refusal can keep them unchanged.
TEST(CleanCli, NonRootYesChangesNothingAndSaysWhy) {
  FakeRoot root;
  std::string prefix;
  if (is_root()) {
    if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "setpriv not available";
    root.open_to_everyone();
    prefix = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  for (const char* args : {"clean --yes --tune-vm --stop-known", "clean --restore"}) {
    SCOPED_TRACE(args);
    Outcome r = run_shell(prefix + SPARKDOC_BIN + " " + args + " --root " + root.path());
    if (is_root() && r.out.find("Permission denied") != std::string::npos) {
      GTEST_SKIP() << "nobody cannot run the test binary here: " << r.out;
    }
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr("needs root"));
    EXPECT_THAT(r.out, HasSubstr("nothing was changed"));
    EXPECT_THAT(r.out, HasSubstr("sudo"));
  }
  EXPECT_EQ(root.vm("drop_caches"), "");
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_FALSE(fs::exists(root.path() + "/var"));
}

TEST(CleanCli, RunThenRestoreOnAFakeMachine) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeRoot root;
  Outcome r = run("clean --yes --tune-vm --need 10GB --root " + root.path());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("sync and drop caches            done"));
  EXPECT_THAT(r.out, HasSubstr("/proc/sys/vm/min_free_kbytes 45166 -> 1048576"));
  EXPECT_THAT(r.out, HasSubstr("Verdict: ready"));
  EXPECT_THAT(r.out, HasSubstr("clean --restore"));
  EXPECT_EQ(root.vm("drop_caches"), "3\n");
  EXPECT_EQ(root.vm("min_free_kbytes"), "1048576\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "500\n");
  ASSERT_TRUE(fs::exists(root.journal()));
  EXPECT_EQ(fs::status(root.journal()).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);

  // Every later start reminds of it, on stderr, in one line.
  Outcome notice = run("check --no-gpu --only G3 --root " + root.path() + " 2>&1 >/dev/null | cat");
  EXPECT_THAT(notice.out, HasSubstr("sparkdoc: values set by `sparkdoc clean --yes --tune-vm"));
  EXPECT_THAT(notice.out, HasSubstr("for the model load are still in place (journal " +
                                    root.journal()));
  EXPECT_THAT(notice.out, HasSubstr("after training, `sparkdoc clean --restore` puts them back"));

  Outcome restore = run("clean --restore --root " + root.path());
  EXPECT_EQ(restore.status, 0) << restore.out;
  EXPECT_THAT(restore.out, Not(HasSubstr("were not restored")));
  EXPECT_THAT(restore.out, HasSubstr("restored /proc/sys/vm/min_free_kbytes 1048576 -> 45166"));
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_FALSE(fs::exists(root.journal()));
  Outcome quiet = run("check --no-gpu --only G3 --root " + root.path() + " 2>&1 >/dev/null | cat");
  EXPECT_THAT(quiet.out, Not(HasSubstr("not restored")));
}

TEST(CleanCli, RunWithoutLastingChangesLeavesNoJournal) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeRoot root;
  Outcome r = run("clean --yes --root " + root.path());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(root.vm("drop_caches"), "3\n");
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_FALSE(fs::exists(root.journal()));
}

TEST(CleanCli, SymbolicLinkAtTheJournalPathIsRefused) {
  if (!is_root()) GTEST_SKIP() << "clean --yes needs root (CI runs as root)";
  FakeRoot root;
  root.tree().write("elsewhere", "keep\n");
  root.tree().symlink(root.path() + "/elsewhere", "var/lib/sparkdoc/journal");
  Outcome r = run("clean --yes --tune-vm --root " + root.path());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("symbolic link"));
  EXPECT_EQ(slurp(root.path() + "/elsewhere"), "keep\n");
  // No journal, no change.
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
}

// The acceptance test through the binary: a process journals and changes values on the fake
// machine, is SIGKILLed inside the window (it says so through a pipe), and
// `sparkdoc clean --restore --root FAKE` brings back every original value.
TEST(CleanCli, RestoreAfterAKilledRunBringsBackEveryOriginal) {
  if (!is_root()) GTEST_SKIP() << "clean --restore needs root (CI runs as root)";
  FakeRoot root;
  Root fake(root.path());
  auto loc = tune::journal_location(fake, 0, "", "").value();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    tune::JournalSession session;
    session.pid = ::getpid();
    session.command = "clean --yes --tune-vm";
    auto journal = tune::JournalWriter::open(loc, 0, session);
    if (!journal) ::_exit(10);
    if (!tune::set_tunable(*journal, fake, tune::Tunable::kMinFreeKbytes, 1048576)) ::_exit(11);
    if (!tune::set_tunable(*journal, fake, tune::Tunable::kVfsCachePressure, 500)) ::_exit(12);
    if (!journal->record_set("/proc/sys/vm/swappiness", "60", "10")) ::_exit(13);
    char c = 'k';
    if (::write(fds[1], &c, 1) != 1) ::_exit(14);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  char c = 0;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  ::close(fds[0]);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_EQ(root.vm("min_free_kbytes"), "1048576\n");

  Outcome restore = run("clean --restore --root " + root.path());
  EXPECT_EQ(restore.status, 0) << restore.out;
  EXPECT_EQ(root.vm("min_free_kbytes"), "45166\n");
  EXPECT_EQ(root.vm("vfs_cache_pressure"), "100\n");
  EXPECT_EQ(root.vm("swappiness"), "60\n");
  EXPECT_FALSE(fs::exists(root.journal()));
}

TEST(CleanCli, RestoreWithoutAJournalSaysSo) {
  if (!is_root()) GTEST_SKIP() << "clean --restore needs root (CI runs as root)";
  FakeRoot root;
  Outcome r = run("clean --restore --root " + root.path());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("nothing to restore"));
}

TEST(CleanCli, UsageErrors) {
  EXPECT_EQ(run("clean --need lots --snapshot " + fixture("gb10-healthy-ngc.json")).status, 2);
  EXPECT_EQ(run("clean --restore --yes").status, 2);
}

}  // namespace
}  // namespace sparkdoc
