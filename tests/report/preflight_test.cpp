// sparkdoc run's preflight line: each WARN shown above it, the count spelled right, skips named.
#include "report/preflight.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "../checks/snapshots.h"

namespace sparkdoc::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Preflight, OneWarningIsShownAndCountedOnce) {
  std::ostringstream say;
  auto verdict = judge_preflight(
      checks::testing::gb10_snapshot(), {"python", "train.py"},
      {checks::Finding{"L7", checks::Verdict::kWarn, "train.py:3: device_map=\"auto\"", {}}}, false,
      say);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(*verdict, "ready-with-warnings");
  EXPECT_THAT(say.str(), HasSubstr("L7 WARN: train.py:3: device_map=\"auto\"\n"));
  EXPECT_THAT(say.str(), HasSubstr("(1 warning above"));
  EXPECT_THAT(say.str(), Not(HasSubstr("1 warnings")));
  EXPECT_THAT(say.str(), HasSubstr("skipped"));
}

}  // namespace
}  // namespace sparkdoc::report
