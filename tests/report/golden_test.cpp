// Golden reports: every fixture snapshot in tests/fixtures/snapshots/ is judged with the
// workload in its sidecar file (NAME.workload.json, optional) and rendered as text, JSON and
// env report; each must equal tests/fixtures/golden/NAME.{txt,json,env.json} byte for byte.
// SPARKDOC_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include "golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/units.h"
#include "model/snapshot_json.h"
#include "report/report.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using testing::compare_or_update;
using testing::fixture_snapshots;
using testing::slurp;

Workload load_workload(const fs::path& p) {
  Workload w;
  if (!fs::exists(p)) return w;
  auto j = nlohmann::json::parse(slurp(p));
  if (j.contains("need")) w.need_bytes = parse_size(j["need"].get<std::string>()).value();
  if (j.contains("playbook")) w.playbook = j["playbook"].get<std::string>();
  if (j.contains("cmd")) w.command = j["cmd"].get<std::string>();
  return w;
}

TEST(Golden, EveryFixtureSnapshotMatchesItsReports) {
  auto snapshots = fixture_snapshots();
  ASSERT_GE(snapshots.size(), 7u) << "six GB10 fixtures and one real GPU machine expected";
  for (const auto& path : snapshots) {
    SCOPED_TRACE(path.string());
    auto parsed = snapshot_from_text(slurp(path));
    ASSERT_TRUE(parsed) << parsed.error().message;
    // A fixture must survive a round trip unchanged: the schema reads what it writes.
    auto again = snapshot_from_text(snapshot_to_text(*parsed));
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *parsed);

    std::string stem = path.stem().string();
    Workload workload = load_workload(path.parent_path() / (stem + ".workload.json"));
    auto rep = report::make_report(*parsed, workload, {}, path.filename().string());
    fs::path golden = fs::path(SPARKDOC_FIXTURES) / "golden";
    compare_or_update(golden / (stem + ".txt"), report::render_text(rep, {}));
    compare_or_update(golden / (stem + ".json"), report::render_json(rep, false).dump(2) + "\n");
    compare_or_update(golden / (stem + ".env.json"),
                      report::render_env_report(rep, false).dump(2) + "\n");
  }
}

}  // namespace
}  // namespace sparkdoc
