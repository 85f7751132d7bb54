// Golden `sparkdoc mem` output and `sparkdoc clean` dry run for every fixture snapshot in
// tests/fixtures/snapshots/: tests/fixtures/golden/mem-NAME.txt, mem-NAME.json and
// clean-NAME.txt, compared byte for byte.
// SPARKDOC_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mem/account.h"
#include "mem/clean.h"
#include "mem/render.h"
#include "snapshot/json.h"

namespace sparkdoc::mem {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void compare_or_update(const fs::path& golden, const std::string& actual) {
  if (std::getenv("SPARKDOC_UPDATE_GOLDEN")) {
    std::ofstream(golden) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing; run with SPARKDOC_UPDATE_GOLDEN=1";
  EXPECT_EQ(slurp(golden), actual) << "golden mismatch: " << golden;
}

std::vector<fs::path> fixture_snapshots() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(SPARKDOC_FIXTURES) / "snapshots")) {
    auto name = e.path().filename().string();
    if (name.ends_with(".json") && !name.ends_with(".workload.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MemGolden, EveryFixtureSnapshotMatchesItsMemReport) {
  auto snapshots = fixture_snapshots();
  ASSERT_GE(snapshots.size(), 7u);
  for (const auto& path : snapshots) {
    SCOPED_TRACE(path.string());
    auto s = snapshot_from_text(slurp(path));
    ASSERT_TRUE(s) << s.error().message;
    MemReport r = account(*s, checks::classify_platform(*s), path.filename().string());
    fs::path golden = fs::path(SPARKDOC_FIXTURES) / "golden";
    std::string stem = "mem-" + path.stem().string();
    compare_or_update(golden / (stem + ".txt"), render_mem_text(r));
    compare_or_update(golden / (stem + ".json"), render_mem_json(r).dump(2) + "\n");
    CleanReport plan = plan_clean(*s, r, CleanRequest{});
    compare_or_update(golden / ("clean-" + path.stem().string() + ".txt"), render_clean_text(plan));
  }
}

}  // namespace
}  // namespace sparkdoc::mem
