// The one health-check line: what a scheduler prints and keeps as the drain reason.
#include "report/health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sparkdoc::report {
namespace {

using checks::Finding;
using checks::Verdict;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<Finding> findings() {
  return {{"G1", Verdict::kPass, "ok", {}},
          {"G3", Verdict::kInfo, "121.4 GB available", {}},
          {"G5", Verdict::kSkip, "no measurement", {}},
          {"N2", Verdict::kWarn, "MTU 1500 on enP2p1s0f0np0", {}},
          {"N4", Verdict::kWarn, "RemoveIPC", {}}};
}

TEST(HealthLine, AHealthyNodeSaysOkWithItsWarnings) {
  HealthLine h = render_health_line(findings(), false);
  EXPECT_TRUE(h.healthy);
  EXPECT_EQ(h.line, "sparkdoc OK: 1 passed, 2 warnings (N2, N4), 1 skipped");
  EXPECT_EQ(render_health_line(findings(), false, "G3, G6, S10, F6 left out: 1 GPU process").line,
            "sparkdoc OK: 1 passed, 2 warnings (N2, N4), 1 skipped; G3, G6, S10, F6 left out: 1 "
            "GPU process");
}

TEST(HealthLine, TheFirstFailureLeadsAndTheOthersAreCounted) {
  auto f = findings();
  f.push_back({"S10", Verdict::kFail, "41.0 GB held outside live processes", {}});
  f.insert(f.begin(), {"G1", Verdict::kFail, "torch built for CUDA 12 on a CUDA 13 driver", {}});
  HealthLine h = render_health_line(f, false);
  EXPECT_FALSE(h.healthy);
  EXPECT_EQ(h.line, "G1 FAIL: torch built for CUDA 12 on a CUDA 13 driver (+1 more: S10)");
}

TEST(HealthLine, StrictFailsOnWarningsAfterTheFailures) {
  HealthLine h = render_health_line(findings(), true);
  EXPECT_FALSE(h.healthy);
  EXPECT_EQ(h.line, "N2 WARN: MTU 1500 on enP2p1s0f0np0 (+1 more: N4)");
}

TEST(HealthLine, ALongDetailIsCutButKeepsTheCountOfTheRest) {
  std::vector<Finding> f = {{"G3", Verdict::kFail, std::string(500, 'x'), {}},
                            {"G6", Verdict::kFail, "vllm", {}}};
  HealthLine h = render_health_line(f, false);
  EXPECT_LE(h.line.size(), kHealthLineMax);
  EXPECT_THAT(h.line, StartsWith("G3 FAIL: xxx"));
  EXPECT_THAT(h.line, HasSubstr("... (+1 more: G6)"));
}

TEST(HealthText, IsPrintableAsciiOnOneLine) {
  EXPECT_EQ(health_text("a\nb\tc — d\x01", 100), "a b c ? d");
  EXPECT_EQ(health_text("abcdefgh", 6), "abc...");
  EXPECT_EQ(health_text("abcdefgh", 2), "..");
  EXPECT_EQ(health_text("\xff\xfe", 10), "??");
}

TEST(MomentaryChecks, AreTheOnesARunningJobChanges) {
  for (std::string_view id : {"G3", "G6", "S10", "F6"}) EXPECT_TRUE(momentary_check(id)) << id;
  for (std::string_view id : {"G1", "N2", "F2", "G10"}) EXPECT_FALSE(momentary_check(id)) << id;
}

}  // namespace
}  // namespace sparkdoc::report
