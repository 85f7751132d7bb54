#include "run/load_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sparkdoc::run {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGB = 1'000'000'000;

TEST(LoadWindow, EndsWhenGpuMemoryStopsGrowingAfterTheLoadStarted) {
  LoadWindow w(LoadWindowRule{}, 0);
  // Start-up: no growth yet, so flat memory does not end it.
  EXPECT_FALSE(w.check(20, 8 * kGB));
  EXPECT_FALSE(w.check(40, 8 * kGB));
  EXPECT_FALSE(w.check(60, 8 * kGB));
  EXPECT_FALSE(w.loading());
  // The load: about 10 GB a minute.
  EXPECT_FALSE(w.check(80, 12 * kGB));
  EXPECT_TRUE(w.loading());
  EXPECT_FALSE(w.check(100, 15 * kGB));
  EXPECT_FALSE(w.check(120, 18 * kGB));
  // A pause of one check does not end it.
  EXPECT_FALSE(w.check(140, 18 * kGB + 100'000'000));
  EXPECT_FALSE(w.check(160, 22 * kGB));
  EXPECT_FALSE(w.check(180, 22 * kGB));
  auto end = w.check(200, 22 * kGB + 200'000'000);
  ASSERT_TRUE(end);
  EXPECT_THAT(*end, HasSubstr("stopped growing at 22.2 GB"));
}

TEST(LoadWindow, EndsAtTheTimeLimitWithoutReadings) {
  LoadWindowRule rule;
  rule.limit_s = 60;
  LoadWindow w(rule, 100);
  EXPECT_FALSE(w.check(120, std::nullopt));
  EXPECT_FALSE(w.check(140, std::nullopt));
  auto end = w.check(160, std::nullopt);
  ASSERT_TRUE(end);
  EXPECT_THAT(*end, HasSubstr("time limit 1 min 0 s"));
}

TEST(LoadWindow, TheTimeLimitSaysWhenMemoryWasStillGrowing) {
  LoadWindowRule rule;
  rule.limit_s = 40;
  LoadWindow w(rule, 0);
  EXPECT_FALSE(w.check(20, 1 * kGB));
  auto end = w.check(40, 5 * kGB);
  ASSERT_TRUE(end);
  EXPECT_THAT(*end, HasSubstr("still growing"));
}

TEST(LoadWindow, ShrinkingMemoryCountsAsNotGrowing) {
  LoadWindow w(LoadWindowRule{}, 0);
  EXPECT_FALSE(w.check(20, 1 * kGB));
  EXPECT_FALSE(w.check(40, 10 * kGB));
  EXPECT_FALSE(w.check(60, 9 * kGB));
  EXPECT_TRUE(w.check(80, 8 * kGB));
}

}  // namespace
}  // namespace sparkdoc::run
