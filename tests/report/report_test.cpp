#include "report/report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sparkdoc::report {
namespace {

using checks::Finding;
using checks::Verdict;

CheckReport sample() {
  CheckReport r;
  r.sparkdoc_version = "0.1.0";
  r.taken_at = "2026-11-29T00:00:00Z";
  r.hostname = "spark-01";
  r.source = "live";
  r.platform.key = "dgx-spark";
  r.platform.description = "DGX Spark";
  r.platform.kind = facts::PlatformKind::kDgxSpark;
  r.findings = {Finding{"G1", Verdict::kPass, "fine", {}},
                Finding{"G3", Verdict::kWarn, "14.2 GB of page cache", {}},
                Finding{"G8", Verdict::kSkip, "no playbook named (--playbook)", {}}};
  return r;
}

TEST(Readiness, FailBlocksWarnOnlyWhenStrict) {
  std::vector<Finding> f = {{"G1", Verdict::kPass, "", {}}, {"G3", Verdict::kWarn, "", {}}};
  EXPECT_EQ(readiness(f, false), Readiness::kReadyWithWarnings);
  EXPECT_EQ(readiness(f, true), Readiness::kBlocked);
  f.push_back({"G9", Verdict::kFail, "", {}});
  EXPECT_EQ(readiness(f, false), Readiness::kBlocked);
  EXPECT_EQ(readiness({{"G1", Verdict::kPass, "", {}}}, false), Readiness::kReady);
}

TEST(RenderText, OneLinePerCheckIdFirst) {
  std::string text = render_text(sample(), {});
  EXPECT_NE(text.find("\nG1 PASS: fine\n"), std::string::npos);
  EXPECT_NE(text.find("\nG3 WARN: 14.2 GB of page cache\n"), std::string::npos);
  EXPECT_NE(text.find("verdict: ready-with-warnings"), std::string::npos);
  EXPECT_EQ(text.find("\x1b["), std::string::npos) << "no colour unless asked";
}

TEST(RenderText, TheVerdictLineSaysWhy) {
  CheckReport r = sample();
  EXPECT_EQ(verdict_reason(r, false), "read the warnings of G3");
  EXPECT_EQ(verdict_reason(r, true), "blocked, with --strict, by G3");
  // Only SKIPs: ready-with-warnings with 0 warnings, said as what it is.
  r.findings.erase(r.findings.begin() + 1);
  std::string text = render_text(r, {});
  EXPECT_NE(text.find("verdict: ready-with-warnings (1 passed, 0 failed, 0 warnings, 1 skipped, 0 "
                      "info): nothing failed or warned, but 1 check could not judge (SKIP: each "
                      "line says why)\n"),
            std::string::npos)
      << text;
  // No GPU read at all is never a plain "ready".
  r.findings = {Finding{"G1", Verdict::kPass, "fine", {}}};
  r.platform.kind = facts::PlatformKind::kNoGpu;
  EXPECT_EQ(verdict_reason(r, false), "no NVIDIA GPU was read, so nothing was judged for one");
  r.findings.push_back(Finding{"S10", Verdict::kFail, "41 GB", {}});
  EXPECT_EQ(verdict_reason(r, false),
            "blocked by S10; no NVIDIA GPU was read, so nothing was judged for one");
  EXPECT_EQ(render_json(r, false)["verdict_reason"], verdict_reason(r, false));
}

TEST(RenderText, ColourOnlyOnTheVerdictWord) {
  TextOptions o;
  o.color = true;
  std::string text = render_text(sample(), o);
  EXPECT_NE(text.find("G1 \x1b[32mPASS\x1b[0m: fine"), std::string::npos);
}

TEST(EnvReport, DocumentedShape) {
  auto j = render_env_report(sample(), false);
  EXPECT_EQ(j["platform"], "dgx-spark");
  EXPECT_EQ(j["checks"]["G1"], "pass");
  EXPECT_EQ(j["checks"]["G3"], "warn: 14.2 GB of page cache");
  EXPECT_EQ(j["checks"]["G8"], "skip: no playbook named (--playbook)");
  EXPECT_EQ(j["verdict"], "ready-with-warnings");
  EXPECT_TRUE(j.contains("headroom_gb"));
}

// docs/CHECKS.md is printed from the table; SPARKDOC_UPDATE_GOLDEN=1 rewrites it.
TEST(ChecksPage, DocsPageEqualsTheTable) {
  std::string path = std::string(SPARKDOC_FIXTURES) + "/../../docs/CHECKS.md";
  std::string expected = render_checks_markdown();
  if (std::getenv("SPARKDOC_UPDATE_GOLDEN")) {
    std::ofstream(path) << expected;
    return;
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), expected) << "regenerate: sparkdoc explain --markdown > docs/CHECKS.md";
}

}  // namespace
}  // namespace sparkdoc::report
