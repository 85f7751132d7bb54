// The clock_cap step of `sparkdoc clean`: planned from a recorded snapshot or from the GPUs
// NVML lists, refused with its reason (a range above the GPU's clocks, no NVML), shown in the
// dry run, and carried out on a fixture root with a GPU clock control that records its calls
// (tests/tune/fake_machine.h): journaled first, then locked, and reset by the restore.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../tune/fake_machine.h"
#include "clean/clean.h"
#include "clean/plan.h"
#include "clean/render.h"
#include "core/fs.h"
#include "facts/platform.h"
#include "golden.h"
#include "mem/account.h"
#include "model/snapshot_json.h"
#include "tune/journal.h"

namespace sparkdoc::clean {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tune::ClockCap;
using tune::ClockGpu;
using tune::testing::FakeGpuClocks;
using tune::testing::FakeMachine;
using tune::testing::gb10_gpu;

Snapshot load(const std::string& name) {
  return snapshot_from_text(testing::slurp(std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name))
      .value();
}

CleanReport plan_of(const Snapshot& s, const CleanRequest& request) {
  mem::MemReport r = mem::account(s, facts::classify_platform(s));
  return plan_clean(s, r, request);
}

CleanRequest asked(const Snapshot& s, ClockCap cap = tune::kGb10ClockCap) {
  CleanRequest request;
  request.cap_clocks = cap;
  request.clock_gpus = clock_gpus_of(s);
  return request;
}

TEST(CleanClockCap, NotAskedSaysWhatItWouldDoOnASpark) {
  CleanReport spark = plan_of(load("gb10-healthy-ngc.json"), CleanRequest{});
  const Step& step = spark.step(StepId::kClockCap);
  EXPECT_EQ(step.state, StepState::kSkipped);
  EXPECT_THAT(step.detail, HasSubstr("not asked: --cap-clocks locks the GPU clocks to 300-2200"));
  EXPECT_THAT(step.detail, HasSubstr("near 90 W can switch off without a log"));
  EXPECT_TRUE(step.clock_locks.empty());
  CleanReport h200 = plan_of(load("h200-idle.json"), CleanRequest{});
  EXPECT_THAT(h200.step(StepId::kClockCap).detail, HasSubstr("not asked: --cap-clocks=MIN,MAX"));
}

TEST(CleanClockCap, PlannedForEachGpuOfTheSnapshot) {
  Snapshot s = load("gb10-healthy-ngc.json");
  CleanReport plan = plan_of(s, asked(s));
  ASSERT_EQ(plan.steps.size(), 11u);
  EXPECT_EQ(plan.steps[5].id, StepId::kClockCap);  // after the vm tuning
  const Step& step = plan.step(StepId::kClockCap);
  EXPECT_EQ(step.state, StepState::kWould);
  ASSERT_EQ(step.clock_locks.size(), 1u);
  EXPECT_EQ(step.clock_locks[0].gpu,
            (ClockGpu{"GPU-5c1f0a2e-7d4b-4f7e-9a51-0c2d8e6b3f10", "NVIDIA GB10", 3003}));
  EXPECT_EQ(step.clock_locks[0].cap, tune::kGb10ClockCap);
  EXPECT_THAT(step.detail, HasSubstr("about 32 W at 66 C under load, against about 47 W at 72 C"));
  EXPECT_THAT(step.detail, HasSubstr("`sparkdoc clean --restore` resets the clocks"));
  EXPECT_EQ(step.lines[0],
            "GPU-5c1f0a2e-7d4b-4f7e-9a51-0c2d8e6b3f10 (NVIDIA GB10): 300-2200 MHz (highest clock "
            "3003 MHz)");
  EXPECT_THAT(step.lines[1], HasSubstr("a power-wedged GB10 (stuck at 500-850 MHz, G4) ignores"));
  nlohmann::json j = render_clean_json(plan);
  EXPECT_EQ(j["steps"][5]["step"], "clock_cap");
  EXPECT_EQ(j["steps"][5]["clock_locks"][0]["max_mhz"], 2200);
  EXPECT_EQ(j["steps"][5]["clock_locks"][0]["gpu_max_mhz"], 3003);
}

// The default is a GB10's; on an H200 (1980 MHz at most) it would cap nothing.
TEST(CleanClockCap, ARangeAboveTheGpusClocksIsRefusedWithOneThatFits) {
  Snapshot s = load("h200-idle.json");
  CleanReport dry_plan = plan_of(s, asked(s));
  const Step& dry = dry_plan.step(StepId::kClockCap);
  EXPECT_EQ(dry.state, StepState::kSkipped);
  EXPECT_THAT(dry.detail, HasSubstr("2200 MHz is above this GPU's highest clock, 1980 MHz"));
  EXPECT_THAT(dry.detail, HasSubstr("--cap-clocks=300,1900"));
  EXPECT_TRUE(dry.clock_locks.empty());
  CleanRequest run = asked(s);
  run.execute = true;
  EXPECT_EQ(plan_of(s, run).step(StepId::kClockCap).state, StepState::kFailed);

  CleanReport fits_plan = plan_of(s, asked(s, ClockCap{300, 1800}));
  const Step& fits = fits_plan.step(StepId::kClockCap);
  EXPECT_EQ(fits.state, StepState::kWould);
  EXPECT_THAT(fits.detail, HasSubstr("the figures behind the default are a GB10's"));
}

TEST(CleanClockCap, NoNvmlIsARefusalWithItsReason) {
  Snapshot s = load("gb10-healthy-ngc.json");
  CleanRequest request = asked(s);
  request.clock_gpus = Missing{Why::kNotSupported, "--no-gpu: NVML is not loaded"};
  CleanReport plan = plan_of(s, request);
  const Step& step = plan.step(StepId::kClockCap);
  EXPECT_EQ(step.state, StepState::kSkipped);
  EXPECT_EQ(step.detail, "cannot cap the GPU clocks: --no-gpu: NVML is not loaded");
  request.clock_gpus = std::vector<ClockGpu>{};
  EXPECT_THAT(plan_of(s, request).step(StepId::kClockCap).detail,
              HasSubstr("NVML lists no GPU with a UUID"));
}

// A fixture machine: the vm files, no swap, a small idle meminfo.
void write_machine(const FakeMachine& m) {
  m.tree().write("proc/meminfo",
                 "MemTotal:       127600748 kB\nMemFree:        116012344 kB\n"
                 "MemAvailable:   118566368 kB\nCached:           3900012 kB\n"
                 "SwapTotal:              0 kB\nSwapFree:               0 kB\n");
}

// clean() reads the fixture machine through capture(), whose probes run on threads of their
// own; qemu-user (the aarch64 suites in CI) can hang for good in pthread_create, so these two
// run natively only (docs/PACKAGING.md lists what the emulated suites leave out).
bool under_emulator() {
  return std::getenv("SPARKDOC_TEST_EMULATOR") != nullptr;
}

TEST(CleanClockCap, CarriedOutJournaledThenLockedAndResetByTheRestore) {
  if (under_emulator()) GTEST_SKIP() << "capture starts threads; qemu-user can hang in them";
  FakeMachine m;
  write_machine(m);
  FakeGpuClocks clocks;
  clocks.listed = {gb10_gpu()};
  std::string journal_at_lock;
  Options options;
  options.machine = this_machine(m.root());
  options.execute = true;
  options.cap_clocks = ClockCap{300, 2000};
  options.clocks = &clocks;
  auto loc = journal_location(options.machine).value();
  clocks.before_lock = [&](const std::string&) {
    journal_at_lock = read_text(loc.path).value_or("");
  };
  CleanReport report = clean(options, std::nullopt, nullptr);
  const Step& step = report.step(StepId::kClockCap);
  EXPECT_EQ(step.state, StepState::kDone) << step.detail;
  EXPECT_THAT(step.detail, HasSubstr("the GPU is locked to 300-2000 MHz, journaled"));
  ASSERT_EQ(step.clock_locks.size(), 1u);
  EXPECT_TRUE(step.clock_locks[0].journaled);
  EXPECT_THAT(clocks.calls, ElementsAre("lock " + gb10_gpu().uuid + " 300 2000"));
  EXPECT_THAT(journal_at_lock, HasSubstr(R"("max_mhz":2000,"min_mhz":300,"name":"NVIDIA GB10",)"
                                         R"("op":"gpu_clocks")"));
  EXPECT_THAT(journal_at_lock, HasSubstr(R"("command":"clean --yes --cap-clocks=300,2000")"));
  // The cap stays for the run: the journal with it.
  ASSERT_TRUE(report.journal);
  EXPECT_THAT(render_clean_footer(report),
              HasSubstr("run `sparkdoc clean --restore` after training"));

  tune::testing::FakeSwap swap;
  auto restored = tune::restore_journal(loc, m.root(), options.machine.euid, swap, clocks);
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_TRUE(restored->removed);
  EXPECT_THAT(clocks.calls,
              ElementsAre("lock " + gb10_gpu().uuid + " 300 2000", "reset " + gb10_gpu().uuid));
  EXPECT_THAT(render_restore_text(*restored), HasSubstr("reset the clocks of " + gb10_gpu().uuid +
                                                        " (NVIDIA GB10) to the driver's default"));
}

TEST(CleanClockCap, AFailedLockFailsTheStepAndLeavesNoJournal) {
  if (under_emulator()) GTEST_SKIP() << "capture starts threads; qemu-user can hang in them";
  FakeMachine m;
  write_machine(m);
  FakeGpuClocks clocks;
  clocks.listed = {gb10_gpu()};
  clocks.fail_lock = "nvmlDeviceSetGpuLockedClocks returned NVML_ERROR_NOT_SUPPORTED";
  Options options;
  options.machine = this_machine(m.root());
  options.execute = true;
  options.cap_clocks = tune::kGb10ClockCap;
  options.clocks = &clocks;
  CleanReport report = clean(options, std::nullopt, nullptr);
  const Step& step = report.step(StepId::kClockCap);
  EXPECT_EQ(step.state, StepState::kFailed);
  EXPECT_THAT(step.detail, HasSubstr("NVML_ERROR_NOT_SUPPORTED"));
  EXPECT_TRUE(report.any_failed());
  // Nothing stayed changed, so the journal this run made is gone.
  EXPECT_FALSE(report.journal);
  EXPECT_FALSE(read_text(journal_location(options.machine).value().path));
}

}  // namespace
}  // namespace sparkdoc::clean
