#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/units.h"
#include "fake_machine.h"
#include "tune/services.h"
#include "tune/swap.h"

namespace sparkdoc::tune {
namespace {

using ::testing::ElementsAre;
using testing::FakeMachine;
using testing::FakeSwap;
using ::testing::HasSubstr;

sys::SwapArea area(std::string path, uint64_t used_bytes, int priority = -2) {
  return sys::SwapArea{std::move(path), "file", 16 * kGB, used_bytes, priority};
}

TEST(SwapResetBlocker, SkipsWithAReason) {
  EXPECT_THAT(swap_reset_blocker({}, 100 * kGB, 0, 8 * kGiB).value(), HasSubstr("no swap area"));
  EXPECT_THAT(swap_reset_blocker({area("/swap.img", 0)}, 100 * kGB, 0, 8 * kGiB).value(),
              HasSubstr("nothing is swapped out"));
  auto no_room = swap_reset_blocker({area("/swap.img", 10 * kGB)}, 15 * kGB, 0, 8 * kGiB);
  ASSERT_TRUE(no_room);
  EXPECT_THAT(*no_room, HasSubstr("10.0 GB swapped out would not fit in RAM: 15.0 GB available"));
  EXPECT_EQ(swap_reset_blocker({area("/swap.img", 10 * kGB)}, 30 * kGB, 0, 8 * kGiB), std::nullopt);
  // Pages the swap cache holds are already in RAM.
  EXPECT_EQ(swap_reset_blocker({area("/swap.img", 10 * kGB)}, 15 * kGB, 4 * kGB, 4 * kGB),
            std::nullopt);
}

TEST(SwapReset, JournalsEachAreaBeforeItsSwapoff) {
  FakeMachine m;
  FakeSwap swap;
  std::vector<sys::SwapArea> areas = {area("/swap.img", kGB), area("/dev/dm-1", 0, 5)};
  swap.areas = areas;
  auto journal = JournalWriter::open(m.journal(), m.euid(), testing::test_session());
  ASSERT_TRUE(journal);
  auto result = reset_swap(*journal, swap, areas);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_TRUE(result[0].turned_off && result[0].turned_on);
  EXPECT_TRUE(result[1].turned_on);
  EXPECT_THAT(swap.calls,
              ElementsAre("off /swap.img", "on /swap.img -2", "off /dev/dm-1", "on /dev/dm-1 5"));
  auto c = parse_journal(read_text(m.journal().path).value()).value();
  ASSERT_EQ(c.swaps_off.size(), 2u);
  EXPECT_EQ(c.swaps_off[1].priority, 5);
}

TEST(SwapReset, AFailedSwaponStaysForTheRestore) {
  FakeMachine m;
  FakeSwap swap;
  swap.fail_on = true;
  std::vector<sys::SwapArea> areas = {area("/swap.img", kGB)};
  swap.areas = areas;
  auto journal = JournalWriter::open(m.journal(), m.euid(), testing::test_session());
  ASSERT_TRUE(journal);
  auto result = reset_swap(*journal, swap, areas);
  ASSERT_EQ(result.size(), 1u);
  EXPECT_TRUE(result[0].turned_off);
  EXPECT_FALSE(result[0].turned_on);
  EXPECT_THAT(result[0].error, HasSubstr("clean --restore"));
}

TEST(KernelSwap, NeverCallsTheKernelOnAFixtureRoot) {
  FakeMachine m;
  m.tree().write("proc/swaps", "Filename Type Size Used Priority\n/swap.img file 1024 0 -2\n");
  KernelSwap swap(m.root());
  auto active = swap.active();
  ASSERT_TRUE(active);
  ASSERT_EQ(active->size(), 1u);
  auto off = swap.swap_off("/swap.img");
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().why, Why::kNotSupported);
  EXPECT_FALSE(swap.swap_on("/swap.img", -2));
}

TEST(StopUnit, ArgvForEachOwner) {
  EXPECT_THAT(stop_unit_argv(kRemoteDesktopUnit, 1000, "ml", 1000),
              ElementsAre("systemctl", "--user", "stop", "gnome-remote-desktop.service"));
  EXPECT_THAT(stop_unit_argv(kRemoteDesktopUnit, 124, "gnome-remote-desktop", 0),
              ElementsAre("systemctl", "stop", "gnome-remote-desktop.service"));
  EXPECT_THAT(
      stop_unit_argv(kRemoteDesktopUnit, 1000, "ml", 0),
      ElementsAre("systemctl", "--user", "--machine=ml@", "stop", "gnome-remote-desktop.service"));
}

TEST(ProcessOwner, FromTheProcFolder) {
  auto mine = process_owner(Root(), static_cast<int>(::getpid()));
  ASSERT_TRUE(mine);
  EXPECT_EQ(*mine, static_cast<unsigned>(::getuid()));
  auto gone = process_owner(Root("/nonexistent-root"), 1);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().why, Why::kAbsent);
  EXPECT_TRUE(user_name(0));
  EXPECT_EQ(user_name(0).value(), "root");
}

TEST(FindProgram, SearchesPathBeforeAnyFork) {
  auto sh = find_program("sh", "/nonexistent:/bin:/usr/bin");
  ASSERT_TRUE(sh);
  EXPECT_THAT(*sh, ::testing::EndsWith("/sh"));
  EXPECT_FALSE(find_program("sparkdoc-no-such-program", "/bin:/usr/bin"));
  EXPECT_FALSE(find_program("/nonexistent/prog", "/bin"));
  EXPECT_FALSE(find_program("", "/bin"));
}

TEST(RunProgram, CapturesOutputAndStatus) {
  auto echo = find_program("echo", "/bin:/usr/bin");
  ASSERT_TRUE(echo);
  auto r =
      run_program({*echo, "stopped", "gnome-remote-desktop.service"}, std::chrono::seconds(10));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_status, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "stopped gnome-remote-desktop.service\n");
  auto false_prog = find_program("false", "/bin:/usr/bin");
  ASSERT_TRUE(false_prog);
  EXPECT_EQ(run_program({*false_prog}, std::chrono::seconds(10))->exit_status, 1);
}

TEST(RunProgram, KillsAChildThatOverstaysTheTimeout) {
  auto sleep = find_program("sleep", "/bin:/usr/bin");
  ASSERT_TRUE(sleep);
  auto start = std::chrono::steady_clock::now();
  auto r = run_program({*sleep, "30"}, std::chrono::milliseconds(200));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_status, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// A child that closes its outputs and keeps running is still bounded by the timeout.
TEST(RunProgram, TimeoutHoldsAfterTheChildClosesItsOutputs) {
  auto sh = find_program("sh", "/bin:/usr/bin");
  ASSERT_TRUE(sh);
  auto start = std::chrono::steady_clock::now();
  auto r =
      run_program({*sh, "-c", "exec >/dev/null 2>&1; sleep 30"}, std::chrono::milliseconds(300));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunProgram, AProgramThatCannotBeRunExits127) {
  auto r = run_program({"/nonexistent/systemctl", "stop"}, std::chrono::seconds(5));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_status, 127);
  EXPECT_FALSE(run_program({}, std::chrono::seconds(1)));
}

}  // namespace
}  // namespace sparkdoc::tune
