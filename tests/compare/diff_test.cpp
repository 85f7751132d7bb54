// What `sparkdoc snapshot --diff` names between two snapshots: a committed fixture against a
// copy with one reading changed, added or removed.
#include "compare/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "golden.h"
#include "model/snapshot_json.h"

namespace sparkdoc::compare {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

Snapshot load(const std::string& name) {
  return snapshot_from_text(testing::slurp(std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name))
      .value();
}

TEST(SnapshotDiff, TheTimeTakenIsNoDifference) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  b.taken_at = "2031-01-01T00:00:00Z";
  EXPECT_THAT(diff_snapshots(a, b), IsEmpty());
  EXPECT_EQ(render_diff_text(std::vector<Difference>{}, "a.json", "b.json"),
            "0 reading(s) differ between a.json and b.json\n");
}

TEST(SnapshotDiff, AChangedReadingShowsBothValues) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  b.meminfo->mem_available_bytes = 1000;
  auto d = diff_snapshots(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (Difference{Change::kChanged, "/meminfo/mem_available_bytes",
                              std::to_string(a.meminfo->mem_available_bytes), "1000"}));
  EXPECT_EQ(render_diff_text(d, "a", "b"),
            "~ /meminfo/mem_available_bytes: " + std::to_string(a.meminfo->mem_available_bytes) +
                " -> 1000\n1 reading(s) differ between a and b\n");
}

// nlohmann::json::diff names an element appended to an array "/-"; the report names its index.
TEST(SnapshotDiff, AGpuOnlyBHasIsAddedAtItsIndex) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  ASSERT_EQ(b.gpu.nvml->devices.size(), 1u);
  b.gpu.nvml->devices.push_back(b.gpu.nvml->devices.front());
  b.gpu.nvml->devices.push_back(b.gpu.nvml->devices.front());
  auto added = diff_snapshots(a, b);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].change, Change::kAdded);
  EXPECT_EQ(added[0].path, "/gpu/nvml/devices/1");
  EXPECT_EQ(added[1].path, "/gpu/nvml/devices/2");
  EXPECT_THAT(added[0].after, HasSubstr("\"temperature_c\":"));
  EXPECT_THAT(added[0].before, IsEmpty());

  auto removed = diff_snapshots(b, a);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].change, Change::kRemoved);
  EXPECT_THAT(removed[0].after, IsEmpty());
  EXPECT_THAT(render_diff_text(removed, "b", "a"), StartsWith("- /gpu/nvml/devices/"));
}

TEST(SnapshotDiff, AReadingOnlyOneSideHasIsAddedOrRemoved) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  b.env["SPARKDOC_TEST_ONLY_IN_B"] = "1";
  auto d = diff_snapshots(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (Difference{Change::kAdded, "/env/SPARKDOC_TEST_ONLY_IN_B", "", "\"1\""}));
  EXPECT_THAT(render_diff_text(diff_snapshots(b, a), "b", "a"),
              StartsWith("- /env/SPARKDOC_TEST_ONLY_IN_B: \"1\"\n"));
}

TEST(SnapshotDiff, TwoMachinesDifferInTheirGpus) {
  auto d = diff_snapshots(load("gb10-healthy-ngc.json"), load("h200-idle.json"));
  ASSERT_THAT(d, ::testing::Not(IsEmpty()));
  bool names_a_gpu = false;
  for (const auto& x : d) names_a_gpu = names_a_gpu || x.path.starts_with("/gpu/nvml/devices/0");
  EXPECT_TRUE(names_a_gpu);
  EXPECT_THAT(render_diff_text(d, "spark", "h200"),
              HasSubstr(std::to_string(d.size()) + " reading(s) differ between spark and h200\n"));
}

// Two snapshots of an idle machine two seconds apart differed in 20 readings, all of them the
// probes' timings and meminfo figures moving by kilobytes (issue 18): they are left out.
TEST(SnapshotDiff, MomentToMomentReadingsAreLeftOutAndCounted) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  b.timings_ms["audit"] += 3.5;
  b.meminfo->mem_free_bytes -= 4096 * 100;
  uint64_t total = a.meminfo->mem_total_bytes;
  DiffReport jitter = select_differences(diff_snapshots(a, b), total, false);
  EXPECT_THAT(jitter.shown, IsEmpty());
  EXPECT_EQ(jitter.left_out, 2u);
  EXPECT_THAT(render_diff_text(jitter, "a", "b"),
              HasSubstr("0 reading(s) differ between a and b\n2 more differ from moment to "
                        "moment"));
  EXPECT_EQ(select_differences(diff_snapshots(a, b), total, true).shown.size(), 2u);
  // A move of 1 % of the memory or more is a reading, as is any meminfo change when the
  // total is unknown.
  b.meminfo->mem_available_bytes -= total / 50;
  DiffReport real = select_differences(diff_snapshots(a, b), total, false);
  ASSERT_EQ(real.shown.size(), 1u);
  EXPECT_EQ(real.shown[0].path, "/meminfo/mem_available_bytes");
  EXPECT_EQ(select_differences(diff_snapshots(a, b), 0, false).shown.size(), 2u);
}

TEST(SnapshotDiff, JsonHoldsTheValuesThemselves) {
  Snapshot a = load("h200-busy.json");
  Snapshot b = a;
  b.meminfo->mem_available_bytes = 1000;
  auto j = render_diff_json(select_differences(diff_snapshots(a, b), 0, false), "a", "b");
  ASSERT_EQ(j["differences"].size(), 1u);
  EXPECT_EQ(j["differences"][0]["change"], "changed");
  EXPECT_EQ(j["differences"][0]["after"], 1000);
  EXPECT_EQ(j["differences"][0]["before"], a.meminfo->mem_available_bytes);
  EXPECT_EQ(j["left_out"], 0);
}

}  // namespace
}  // namespace sparkdoc::compare
