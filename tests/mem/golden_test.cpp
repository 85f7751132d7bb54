// Golden `sparkdoc mem` output for every fixture snapshot in tests/fixtures/snapshots/:
// tests/fixtures/golden/mem-NAME.txt and mem-NAME.json, compared byte for byte.
// SPARKDOC_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include "golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "facts/platform.h"
#include "mem/account.h"
#include "mem/render.h"
#include "model/snapshot_json.h"

namespace sparkdoc::mem {
namespace {

namespace fs = std::filesystem;
using testing::compare_or_update;
using testing::fixture_snapshots;
using testing::slurp;

TEST(MemGolden, EveryFixtureSnapshotMatchesItsMemReport) {
  auto snapshots = fixture_snapshots();
  ASSERT_GE(snapshots.size(), 7u);
  for (const auto& path : snapshots) {
    SCOPED_TRACE(path.string());
    auto s = snapshot_from_text(slurp(path));
    ASSERT_TRUE(s) << s.error().message;
    MemReport r = account(*s, facts::classify_platform(*s), path.filename().string());
    fs::path golden = fs::path(SPARKDOC_FIXTURES) / "golden";
    std::string stem = "mem-" + path.stem().string();
    compare_or_update(golden / (stem + ".txt"), render_mem_text(r));
    compare_or_update(golden / (stem + ".json"), render_mem_json(r).dump(2) + "\n");
  }
}

}  // namespace
}  // namespace sparkdoc::mem
