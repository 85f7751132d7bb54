// The cleanup plan of `sparkdoc clean` on the committed fixture snapshots, one field changed at
// a time: which steps would run, which are skipped and why, and the need it judges.
#include "clean/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "golden.h"
#include "mem/account.h"
#include "model/snapshot_json.h"

namespace sparkdoc::clean {
namespace {

using ::testing::HasSubstr;

Snapshot load_fixture(const std::string& name) {
  return snapshot_from_text(testing::slurp(std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name))
      .value();
}

mem::MemReport account_of(const Snapshot& s) {
  return mem::account(s, facts::classify_platform(s));
}

TEST(CleanPlan, SkipsAndWouldsFromTheSnapshot) {
  Snapshot s = load_fixture("gb10-three-killed-containers.json");
  mem::MemReport r = account_of(s);
  CleanReport plan = plan_clean(s, r, CleanRequest{});
  ASSERT_EQ(plan.steps.size(), 11u);
  EXPECT_EQ(plan.step(StepId::kStopKnown).state, StepState::kSkipped);
  EXPECT_THAT(plan.step(StepId::kStopKnown).detail, HasSubstr("--stop-known"));
  EXPECT_EQ(plan.step(StepId::kDropCaches).state, StepState::kWould);
  EXPECT_EQ(plan.step(StepId::kSwapReset).detail, "no swap");
  EXPECT_THAT(plan.step(StepId::kVmTuning).detail, HasSubstr("already at the load-window"));
  ASSERT_TRUE(plan.verdict);
  EXPECT_EQ(plan.verdict->need.bytes, kSeedNeedBytes);
  EXPECT_TRUE(plan.verdict->pass);

  CleanRequest asked;
  asked.stop_known = true;
  asked.tune_vm = true;
  asked.need_bytes = 75 * kGB;
  CleanReport with = plan_clean(s, r, asked);
  EXPECT_EQ(with.step(StepId::kStopKnown).state, StepState::kWould);
  const Step& vm = with.step(StepId::kVmTuning);
  EXPECT_EQ(vm.state, StepState::kWould);
  ASSERT_EQ(vm.edits.size(), 2u);
  EXPECT_EQ(vm.edits[0].path, "/proc/sys/vm/min_free_kbytes");
  EXPECT_EQ(vm.edits[0].new_value, 1048576);
  EXPECT_EQ(vm.edits[1].new_value, 500);
  EXPECT_FALSE(with.verdict->pass);  // 73.8 GB of headroom against 75 GB
}

TEST(CleanPlan, SwapResetNeedsRoomInRam) {
  Snapshot s = load_fixture("gb10-power-capped.json");  // 16 GB of swap, 0.2 GB used
  mem::MemReport r = account_of(s);
  EXPECT_EQ(plan_clean(s, r, CleanRequest{}).step(StepId::kSwapReset).state, StepState::kWould);
  s.meminfo->swap_free_bytes = s.meminfo->swap_total_bytes;
  EXPECT_THAT(plan_clean(s, account_of(s), CleanRequest{}).step(StepId::kSwapReset).detail,
              HasSubstr("nothing is swapped out"));
  s.meminfo->swap_free_bytes = 0;
  s.meminfo->mem_available_bytes = 20 * kGB;
  EXPECT_THAT(plan_clean(s, account_of(s), CleanRequest{}).step(StepId::kSwapReset).detail,
              HasSubstr("would not fit in RAM"));
}

TEST(CleanPlan, NeedDefaultsTo70GbOnASparkOnly) {
  facts::Platform spark;
  spark.kind = facts::PlatformKind::kDgxSpark;
  facts::Platform discrete;
  discrete.kind = facts::PlatformKind::kDiscrete;
  EXPECT_EQ(choose_need(spark, std::nullopt)->bytes, 70 * kGB);
  EXPECT_EQ(choose_need(discrete, std::nullopt), std::nullopt);
  EXPECT_EQ(choose_need(discrete, 10 * kGB)->bytes, 10 * kGB);
  EXPECT_EQ(choose_need(discrete, 10 * kGB)->source, "--need");
  EXPECT_FALSE(judge(std::nullopt, MemoryNeed{kGB, "--need"}).headroom_bytes);
  facts::Headroom h;
  h.bytes = -5;
  EXPECT_FALSE(judge(h, MemoryNeed{0, "--need"}).pass);
}

}  // namespace
}  // namespace sparkdoc::clean
