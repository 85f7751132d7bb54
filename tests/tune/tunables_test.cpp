#include "tune/tunables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "fake_machine.h"

namespace sparkdoc::tune {
namespace {

using testing::FakeMachine;
using ::testing::HasSubstr;

TEST(Tunables, AllowListIsTheFourVmFiles) {
  std::vector<std::string> paths;
  for (const auto& t : tunables()) paths.emplace_back(t.path);
  EXPECT_THAT(paths,
              ::testing::ElementsAre("/proc/sys/vm/drop_caches", "/proc/sys/vm/min_free_kbytes",
                                     "/proc/sys/vm/vfs_cache_pressure", "/proc/sys/vm/swappiness"));
  EXPECT_EQ(find_tunable("/proc/sys/vm/min_free_kbytes")->id, Tunable::kMinFreeKbytes);
  EXPECT_EQ(find_tunable("/proc/sys/vm/../vm/min_free_kbytes"), nullptr);
  EXPECT_EQ(find_tunable("/etc/passwd"), nullptr);
  EXPECT_FALSE(tunable_info(Tunable::kDropCaches).setting);
  EXPECT_TRUE(tunable_info(Tunable::kSwappiness).setting);
}

TEST(Tunables, SeedValues) {
  // 000 §6: "echo 1048576 > min_free_kbytes", "echo 500 > vfs_cache_pressure", and the
  // defaults to restore, 45166 and 100.
  EXPECT_EQ(kLoadMinFreeKbytes, 1048576);
  EXPECT_EQ(kLoadVfsCachePressure, 500);
  EXPECT_EQ(kSeedDefaultMinFreeKbytes, 45166);
  EXPECT_EQ(kSeedDefaultVfsCachePressure, 100);
}

TEST(Tunables, ReadAndWriteThroughTheRoot) {
  FakeMachine m;
  EXPECT_EQ(read_tunable(m.root(), Tunable::kMinFreeKbytes).value(), 45166);
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kMinFreeKbytes, 1048576));
  EXPECT_EQ(m.vm("min_free_kbytes"), "1048576\n");
  // A shorter value replaces the longer one whole.
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kMinFreeKbytes, 7));
  EXPECT_EQ(m.vm("min_free_kbytes"), "7\n");
  EXPECT_FALSE(read_tunable(m.root(), Tunable::kDropCaches));
}

TEST(Tunables, WriterNeverCreatesFiles) {
  FakeMachine m;
  std::filesystem::remove(m.path() + "/proc/sys/vm/swappiness");
  auto w = write_tunable(m.root(), Tunable::kSwappiness, 10);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().why, Why::kAbsent);
  EXPECT_FALSE(std::filesystem::exists(m.path() + "/proc/sys/vm/swappiness"));
}

TEST(Tunables, WriterRefusesASymbolicLink) {
  FakeMachine m;
  m.tree().write("elsewhere", "keep\n");
  std::filesystem::remove(m.path() + "/proc/sys/vm/swappiness");
  m.tree().symlink(m.path() + "/elsewhere", "proc/sys/vm/swappiness");
  auto w = write_tunable(m.root(), Tunable::kSwappiness, 10);
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("symbolic link"));
  EXPECT_EQ(m.read("elsewhere"), "keep\n");
}

TEST(Tunables, DropCachesWritesThree) {
  FakeMachine m;
  ASSERT_TRUE(sync_and_drop_caches(m.root()));
  EXPECT_EQ(m.vm("drop_caches"), "3\n");
}

TEST(Tunables, SetTunableJournalsTheOldValueFirst) {
  FakeMachine m;
  auto journal = JournalWriter::open(m.journal(), m.euid(), testing::test_session());
  ASSERT_TRUE(journal) << journal.error().message;
  auto c = set_tunable(*journal, m.root(), Tunable::kVfsCachePressure, 500);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->changed);
  EXPECT_EQ(c->old_value, 100);
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "500\n");
  auto text = read_text(m.journal().path).value();
  EXPECT_THAT(text, HasSubstr(R"({"new":"500","old":"100","op":"set",)"
                              R"("path":"/proc/sys/vm/vfs_cache_pressure"})"));
  // Already at the value: nothing journaled, nothing written.
  auto again = set_tunable(*journal, m.root(), Tunable::kVfsCachePressure, 500);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(journal->records(), 1u);
  EXPECT_FALSE(set_tunable(*journal, m.root(), Tunable::kDropCaches, 3));
}

TEST(Tunables, OnlyRootMayChangeTheMachine) {
  EXPECT_EQ(privilege_problem(0), std::nullopt);
  auto problem = privilege_problem(1000);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("needs root"));
  EXPECT_THAT(*problem, HasSubstr("uid 1000"));
  EXPECT_THAT(*problem, HasSubstr("nothing was changed"));
}

}  // namespace
}  // namespace sparkdoc::tune
