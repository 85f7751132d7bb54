// The GPU clock cap of clean and run: the value of --cap-clocks, the GB10's figures, the
// journal's "gpu_clocks" lines (round trip, damaged lines) and their restore, the lock
// journaled before it is made. The GPU is tests/tune/fake_machine.h's FakeGpuClocks: no NVML.
#include "tune/gpu_clocks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "core/fs.h"
#include "fake_machine.h"
#include "tune/clock_cap.h"
#include "tune/journal.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {
namespace {

using ::testing::ElementsAre;
using testing::FakeGpuClocks;
using testing::FakeMachine;
using testing::FakeSwap;
using testing::gb10_gpu;
using ::testing::HasSubstr;
using testing::test_session;

constexpr std::string_view kCapClocksBegin =
    R"({"command":"clean --yes --cap-clocks=300,2200","op":"begin","pid":4242,)"
    R"("sparkdoc_journal":1,"started_at":"2026-11-29T10:15:00Z"})"
    "\n";

void write_journal(const FakeMachine& m, const std::string& text) {
  m.tree().mkdir("var/lib/sparkdoc");
  m.tree().write("var/lib/sparkdoc/journal", text);
  ::chmod(m.journal().path.c_str(), 0600);
}

TEST(ClockCap, TheOptionAloneIsTheFieldsCap) {
  EXPECT_EQ(parse_clock_cap("").value(), (ClockCap{300, 2200}));
  EXPECT_EQ(parse_clock_cap("2000").value(), (ClockCap{300, 2000}));
  EXPECT_EQ(parse_clock_cap("300,1800").value(), (ClockCap{300, 1800}));
  EXPECT_EQ(parse_clock_cap("0,2100").value(), (ClockCap{0, 2100}));
  EXPECT_EQ(clock_cap_text(kGb10ClockCap), "300-2200 MHz");
}

TEST(ClockCap, BadRangesSayTheForm) {
  for (const char* bad : {"abc", "300,", ",2200", "-1,2000", "+2000", "300,2200,3", "2,2k"}) {
    SCOPED_TRACE(bad);
    auto cap = parse_clock_cap(bad);
    ASSERT_FALSE(cap);
    EXPECT_THAT(cap.error().message, HasSubstr("--cap-clocks"));
  }
  EXPECT_THAT(parse_clock_cap("2200,300").error().message,
              HasSubstr("MIN 2200 MHz is above MAX 300 MHz"));
  EXPECT_THAT(parse_clock_cap("400").error().message, HasSubstr("under 500 MHz"));
  EXPECT_THAT(parse_clock_cap("300,5000").error().message, HasSubstr("no NVIDIA GPU reaches"));
}

TEST(ClockCap, Gb10FiguresFromTheField) {
  EXPECT_EQ(gb10_cap_effect(2200),
            "about 32 W at 66 C under load, against about 47 W at 72 C uncapped (2455 MHz)");
  EXPECT_THAT(gb10_cap_effect(2100),
              HasSubstr("between 2000 MHz (27 W, 63 C) and 2200 MHz (32 W, 66 C)"));
  EXPECT_THAT(gb10_cap_effect(1500), HasSubstr("less than at 1800 MHz"));
  EXPECT_THAT(gb10_cap_effect(2600), HasSubstr("uncapped: 47 W at 72 C (2455 MHz)"));
}

TEST(ClockCap, AMaxAboveTheGpusHighestClockIsRefused) {
  ClockGpu h200{"GPU-b90b8fc4", "NVIDIA H200", 1980};
  auto why = clock_cap_blocker(h200, kGb10ClockCap);
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("2200 MHz is above this GPU's highest clock, 1980 MHz"));
  EXPECT_THAT(*why, HasSubstr("--cap-clocks=300,1900"));
  EXPECT_FALSE(clock_cap_blocker(h200, ClockCap{300, 1980}));
  EXPECT_FALSE(clock_cap_blocker(gb10_gpu(), kGb10ClockCap));
  EXPECT_FALSE(clock_cap_blocker(ClockGpu{"GPU-x", "", std::nullopt}, kGb10ClockCap));
}

TEST(GpuClocksJournal, RoundTrip) {
  FakeMachine m;
  {
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session("clean --yes --cap-clocks"));
    ASSERT_TRUE(w) << w.error().message;
    ClockGpu gpu = gb10_gpu();
    ASSERT_TRUE(w->record_gpu_clocks(gpu.uuid, gpu.name, 300, 2200, gpu.max_mhz));
    ASSERT_TRUE(w->record_gpu_clocks("GPU-2", "", 300, 2000, std::nullopt));
    EXPECT_EQ(w->records(), 2u);
  }
  std::string text = read_text(m.journal().path).value();
  EXPECT_THAT(text, HasSubstr(R"({"gpu_max_mhz":3003,"max_mhz":2200,"min_mhz":300,)"
                              R"("name":"NVIDIA GB10","op":"gpu_clocks",)"
                              R"("uuid":"GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c"})"
                              "\n"));
  auto c = parse_journal(text);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->problems.empty());
  EXPECT_FALSE(c->empty());
  ASSERT_EQ(c->gpu_clocks.size(), 2u);
  EXPECT_EQ(c->gpu_clocks[0],
            (GpuClocksRecord{2, gb10_gpu().uuid, "NVIDIA GB10", 300, 2200, 3003}));
  EXPECT_EQ(c->gpu_clocks[1], (GpuClocksRecord{3, "GPU-2", "", 300, 2000, std::nullopt}));
}

TEST(GpuClocksJournal, DamagedLinesAreProblems) {
  std::string text = std::string(kCapClocksBegin) +
                     R"({"op":"gpu_clocks","min_mhz":300,"max_mhz":2200})" + "\n" +
                     R"({"op":"gpu_clocks","uuid":"GPU-1","min_mhz":"300","max_mhz":2200})" + "\n" +
                     R"({"op":"gpu_clocks","uuid":"GPU-1","min_mhz":300,"max_mhz":-5})" + "\n" +
                     R"({"op":"gpu_clocks","uuid":"","min_mhz":300,"max_mhz":2200})" + "\n" +
                     R"({"op":"gpu_clocks","uuid":"GPU 1\n","min_mhz":300,"max_mhz":2200})" + "\n";
  auto c = parse_journal(text);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->gpu_clocks.empty());
  ASSERT_EQ(c->problems.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(c->problems[i], "line " + std::to_string(i + 2) +
                                  ": \"gpu_clocks\" needs a GPU's uuid, min_mhz and max_mhz");
  }
}

TEST(GpuClocksJournal, EachGpuOnceInItsFirstRecord) {
  std::string text = std::string(kCapClocksBegin) +
                     R"({"max_mhz":2200,"min_mhz":300,"op":"gpu_clocks","uuid":"GPU-1"})"
                     "\n" +
                     R"({"max_mhz":2000,"min_mhz":300,"op":"gpu_clocks","uuid":"GPU-2"})"
                     "\n" +
                     R"({"max_mhz":1800,"min_mhz":300,"op":"gpu_clocks","uuid":"GPU-1"})"
                     "\n";
  auto c = parse_journal(text).value();
  ASSERT_EQ(c.clocked_gpus().size(), 2u);
  EXPECT_EQ(c.clocked_gpus()[0].max_mhz, 2200u);
  EXPECT_EQ(c.clocked_gpus()[1].uuid, "GPU-2");
}

TEST(GpuClocks, TheLockIsJournaledBeforeItIsMade) {
  FakeMachine m;
  FakeGpuClocks clocks;
  clocks.listed = {gb10_gpu()};
  std::string journal_at_lock;
  clocks.before_lock = [&](const std::string&) {
    journal_at_lock = read_text(m.journal().path).value_or("");
  };
  auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
  ASSERT_TRUE(w);
  ASSERT_TRUE(cap_gpu_clocks(*w, clocks, gb10_gpu(), kGb10ClockCap));
  EXPECT_THAT(journal_at_lock, HasSubstr(R"("op":"gpu_clocks")"));
  EXPECT_THAT(clocks.calls, ElementsAre("lock " + gb10_gpu().uuid + " 300 2200"));

  // A lock that fails after its line: the line stays (a reset of an unlocked GPU is harmless).
  clocks.fail_lock = "NVML_ERROR_NOT_SUPPORTED";
  auto failed = cap_gpu_clocks(*w, clocks, gb10_gpu(), ClockCap{300, 2000});
  ASSERT_FALSE(failed);
  EXPECT_EQ(w->records(), 2u);
}

TEST(GpuClocksRestore, ResetsEveryJournaledGpuAndRemovesTheJournal) {
  FakeMachine m;
  FakeSwap swap;
  FakeGpuClocks clocks;
  clocks.listed = {gb10_gpu()};
  {
    auto w = JournalWriter::open(m.journal(), m.euid(), test_session());
    ASSERT_TRUE(w);
    ASSERT_TRUE(set_tunable(*w, m.root(), Tunable::kMinFreeKbytes, kLoadMinFreeKbytes));
    ASSERT_TRUE(cap_gpu_clocks(*w, clocks, gb10_gpu(), kGb10ClockCap));
    ASSERT_TRUE(cap_gpu_clocks(*w, clocks, gb10_gpu(), ClockCap{300, 2000}));
  }
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap, clocks);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->problems.empty()) << r->problems.front();
  ASSERT_EQ(r->gpu_clocks.size(), 1u);
  EXPECT_EQ(r->gpu_clocks[0], (RestoredClocks{gb10_gpu().uuid, "NVIDIA GB10", true, ""}));
  EXPECT_THAT(clocks.calls,
              ElementsAre("lock " + gb10_gpu().uuid + " 300 2200",
                          "lock " + gb10_gpu().uuid + " 300 2000", "reset " + gb10_gpu().uuid));
  EXPECT_EQ(m.vm("min_free_kbytes"), "45166\n");
  EXPECT_TRUE(r->removed);
}

// After a reboot with the GPU gone (or another machine's journal), the rest is restored and
// the journal stays, saying why.
TEST(GpuClocksRestore, AGpuNoLongerThereIsAProblemAndTheJournalStays) {
  FakeMachine m;
  FakeSwap swap;
  FakeGpuClocks clocks;
  write_journal(m, std::string(kCapClocksBegin) +
                       R"({"max_mhz":2200,"min_mhz":300,"op":"gpu_clocks","uuid":"GPU-gone"})" +
                       "\n" + R"({"new":"500","old":"100","op":"set",)" +
                       R"("path":"/proc/sys/vm/vfs_cache_pressure"})" + "\n");
  ASSERT_TRUE(write_tunable(m.root(), Tunable::kVfsCachePressure, 500));
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap, clocks);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(m.vm("vfs_cache_pressure"), "100\n");
  ASSERT_EQ(r->gpu_clocks.size(), 1u);
  EXPECT_FALSE(r->gpu_clocks[0].restored);
  EXPECT_THAT(r->gpu_clocks[0].error, HasSubstr("no GPU with UUID GPU-gone"));
  EXPECT_THAT(r->gpu_clocks[0].error, HasSubstr("a reboot resets locked clocks anyway"));
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_THAT(r->problems[0], HasSubstr("GPU-gone: clocks not reset"));
  EXPECT_FALSE(r->removed);
  EXPECT_TRUE(std::filesystem::exists(m.journal().path));
}

// On a fixture root the system's NVML would reset this machine's GPU: without
// SPARKDOC_NVML_LIBRARY the restore refuses, and the journal stays.
TEST(GpuClocksRestore, AFixtureRootNeverReachesTheSystemsNvml) {
  const char* named = std::getenv("SPARKDOC_NVML_LIBRARY");
  if (named != nullptr && named[0] != '\0') GTEST_SKIP() << "SPARKDOC_NVML_LIBRARY is set";
  FakeMachine m;
  FakeSwap swap;
  write_journal(m, std::string(kCapClocksBegin) +
                       R"({"max_mhz":2200,"min_mhz":300,"op":"gpu_clocks","uuid":"GPU-1"})" + "\n");
  auto r = restore_journal(m.journal(), m.root(), m.euid(), swap);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->gpu_clocks.size(), 1u);
  EXPECT_THAT(r->gpu_clocks[0].error, HasSubstr("not on a fixture root"));
  EXPECT_FALSE(r->removed);
}

TEST(GpuClocksControl, NoGpuRefusesAndSaysWhy) {
  auto clocks = gpu_clock_control(Root(), true);
  auto gpus = clocks->gpus();
  ASSERT_FALSE(gpus);
  EXPECT_THAT(gpus.error().message, HasSubstr("--no-gpu"));
  EXPECT_FALSE(clocks->reset("GPU-1"));
}

}  // namespace
}  // namespace sparkdoc::tune
