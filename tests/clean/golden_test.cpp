// Golden `sparkdoc clean` dry run for every fixture snapshot in tests/fixtures/snapshots/:
// tests/fixtures/golden/clean-NAME.txt, compared byte for byte.
// SPARKDOC_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include "golden.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "clean/plan.h"
#include "clean/render.h"
#include "facts/platform.h"
#include "mem/account.h"
#include "model/snapshot_json.h"

namespace sparkdoc::clean {
namespace {

namespace fs = std::filesystem;
using testing::compare_or_update;
using testing::fixture_snapshots;
using testing::slurp;

TEST(CleanGolden, EveryFixtureSnapshotMatchesItsDryRun) {
  auto snapshots = fixture_snapshots();
  ASSERT_GE(snapshots.size(), 7u);
  for (const auto& path : snapshots) {
    SCOPED_TRACE(path.string());
    auto s = snapshot_from_text(slurp(path));
    ASSERT_TRUE(s) << s.error().message;
    mem::MemReport r = mem::account(*s, facts::classify_platform(*s), path.filename().string());
    CleanReport plan = plan_clean(*s, r, CleanRequest{});
    compare_or_update(
        fs::path(SPARKDOC_FIXTURES) / "golden" / ("clean-" + path.stem().string() + ".txt"),
        render_clean_text(plan));
  }
}

}  // namespace
}  // namespace sparkdoc::clean
