// The rows `sparkdoc compare` builds from the nodes' snapshots: the planted drift of the fixture
// pair named with its severity, ports matched by PCI address, readings not recorded never a
// break; and the text and JSON against golden files.
#include "compare/nodes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "compare/render.h"
#include "fixtures.h"

namespace sparkdoc::compare {
namespace {

using sparkdoc::testing::compare_fixture;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<Node> pair(Snapshot a, Snapshot b) {
  return {{"spark-a", std::move(a)}, {"spark-b", std::move(b)}};
}

const Row* find(const Comparison& c, const std::string& reading) {
  for (const Row& row : c.rows) {
    if (row.reading == reading) return &row;
  }
  return nullptr;
}

// The row `reading`, which must differ with `severity`.
void expect_differs(const Comparison& c, const std::string& reading, Severity severity) {
  const Row* row = find(c, reading);
  ASSERT_NE(row, nullptr) << reading;
  EXPECT_EQ(row->state, RowState::kDiffers) << reading;
  EXPECT_EQ(severity_key(row->severity), severity_key(severity)) << reading;
}

// Node a against a copy of it changed by `change`.
template <class Change>
Comparison against_changed(Change change) {
  Snapshot a = compare_fixture("node-a.json");
  Snapshot b = a;
  change(b);
  return compare_nodes(pair(a, b));
}

std::vector<std::string> differing(const Comparison& c) {
  std::vector<std::string> out;
  for (const Row& row : c.rows) {
    if (row.state == RowState::kDiffers) out.push_back(row.reading);
  }
  return out;
}

TEST(CompareNodes, TheFixturePairNamesEachPlantedDifference) {
  Comparison c =
      compare_nodes(pair(compare_fixture("node-a.json"), compare_fixture("node-b.json")));
  expect_differs(c, "driver", Severity::kLook);  // one branch, 580
  expect_differs(c, "MTU 0002:01:00.0", Severity::kBreaks);
  expect_differs(c, "env NCCL_IB_HCA", Severity::kLook);
  expect_differs(c, "NCCL port halves", Severity::kBreaks);
  expect_differs(c, "NCCL (torch's wheel)", Severity::kBreaks);
  expect_differs(c, "RemoveIPC", Severity::kBreaks);
  expect_differs(c, "env NODE_RANK", Severity::kHarmless);
  EXPECT_TRUE(breaks_job(c));
  // Nothing else: MAC addresses, GIDs' addresses, the GPU's UUID are no row.
  EXPECT_EQ(differing(c).size(), 7u) << ::testing::PrintToString(differing(c));
  EXPECT_EQ(find(c, "NCCL port halves")->values[1], "rocep1s0f0 only (01:00.0)");
  EXPECT_EQ(find(c, "NCCL port halves")->values[0], "both halves (01:00.0)");
}

TEST(CompareNodes, IdenticalSnapshotsDifferInNothing) {
  Snapshot a = compare_fixture("node-a.json");
  Comparison c = compare_nodes(pair(a, a));
  EXPECT_THAT(differing(c), ::testing::IsEmpty());
  EXPECT_FALSE(breaks_job(c));
  for (const Row& row : c.rows) EXPECT_FALSE(shown_by_default(row)) << row.reading;
}

TEST(CompareNodes, AnotherDriverBranchBreaks) {
  Comparison c =
      against_changed([](Snapshot& b) { b.gpu.nvml->driver_version = std::string("575.57.08"); });
  expect_differs(c, "driver", Severity::kBreaks);
}

TEST(CompareNodes, PortsAreMatchedByPciAddressNotByName) {
  Comparison c = against_changed([](Snapshot& b) {
    for (auto& i : b.network->interfaces) {
      if (i.name == "enp1s0f0np0") i.name = "eth2";  // a container's name for the same function
    }
  });
  EXPECT_THAT(differing(c), ::testing::IsEmpty());
}

TEST(CompareNodes, AReadingNotRecordedOnOneNodeIsNeverABreak) {
  Comparison c = against_changed([](Snapshot& b) { b.network = not_recorded<net::NetReadings>(); });
  EXPECT_FALSE(breaks_job(c));
  const Row* mtu = find(c, "MTU 0000:01:00.0");
  ASSERT_NE(mtu, nullptr);
  EXPECT_EQ(mtu->state, RowState::kNotRecorded);
  EXPECT_EQ(mtu->severity, Severity::kLook);
  EXPECT_FALSE(mtu->values[1].has_value());
  EXPECT_TRUE(shown_by_default(*mtu));
}

TEST(CompareNodes, ARailDownOnOneNodeBreaks) {
  Comparison c = against_changed([](Snapshot& b) {
    for (auto& d : b.network->rdma) {
      if (d.name == "roceP2p1s0f0") d.ports[0].state = "1: DOWN";
    }
  });
  expect_differs(c, "link rate 0002:01:00.0", Severity::kBreaks);
  // NCCL_IB_HCA names both halves on both nodes, so that row agrees; the link row says which
  // half is down.
  EXPECT_EQ(find(c, "NCCL port halves")->state, RowState::kSame);
}

TEST(CompareNodes, ALinkAtAFractionOfItsRateIsWorthALook) {
  Comparison c =
      against_changed([](Snapshot& b) { b.network->rdma[0].ports[0].rate_gbps = 100.0; });
  expect_differs(c, "link rate 0002:01:00.0", Severity::kLook);  // rdma[0]: roceP2p1s0f0
}

TEST(CompareNodes, TheHotPlugFlagAndAStaleNcclConfBreak) {
  Comparison c = against_changed([](Snapshot& b) {
    b.network->cx7_hotplug_flag = true;
    b.network->nccl_conf = net::NcclConfFile{"/etc/nccl.conf", {{"NCCL_IB_USE_INLINE", "1"}}, 0};
  });
  expect_differs(c, "cx7 hot-plug flag", Severity::kBreaks);
  expect_differs(c, "nccl.conf", Severity::kBreaks);
  EXPECT_EQ(find(c, "nccl.conf")->values[0], "none");
}

TEST(CompareNodes, AnotherRendezvousBreaksAndARankIsHarmless) {
  Comparison c = against_changed([](Snapshot& b) {
    b.env["MASTER_ADDR"] = "192.168.100.99";
    b.env["RANK"] = "1";
  });
  expect_differs(c, "env MASTER_ADDR", Severity::kBreaks);
  expect_differs(c, "env RANK", Severity::kHarmless);
  EXPECT_EQ(find(c, "env RANK")->values[0], "unset");
}

TEST(CompareNodes, TheGidIndexIsReadFromTheRoceV2Ipv4Entry) {
  Comparison c = against_changed([](Snapshot& b) {
    for (auto& g : b.network->rdma[0].ports[0].gids) {
      if (g.index == 3) g.index = 5;
    }
  });
  const std::string row = "RoCE v2 GID index 0002:01:00.0";
  expect_differs(c, row, Severity::kLook);
  EXPECT_EQ(find(c, row)->values[0], "3");
  EXPECT_EQ(find(c, row)->values[1], "5");
}

TEST(CompareNodes, ThePortHalvesRowComesLast) {
  Comparison c =
      compare_nodes(pair(compare_fixture("node-a.json"), compare_fixture("node-b.json")));
  ASSERT_FALSE(c.rows.empty());
  EXPECT_EQ(c.rows.back().reading, "NCCL port halves");
}

TEST(CompareRender, TwoNodeTextMatchesTheGolden) {
  Comparison c =
      compare_nodes(pair(compare_fixture("node-a.json"), compare_fixture("node-b.json")));
  testing::compare_or_update(testing::golden_dir() / "compare-two-node.txt",
                             render_compare_text(c, false));
}

TEST(CompareRender, TwoNodeAllTextMatchesTheGolden) {
  Comparison c =
      compare_nodes(pair(compare_fixture("node-a.json"), compare_fixture("node-b.json")));
  testing::compare_or_update(testing::golden_dir() / "compare-two-node-all.txt",
                             render_compare_text(c, true));
}

TEST(CompareRender, TwoNodeJsonMatchesTheGolden) {
  Comparison c =
      compare_nodes(pair(compare_fixture("node-a.json"), compare_fixture("node-b.json")));
  testing::compare_or_update(testing::golden_dir() / "compare-two-node.json",
                             render_compare_json(c, {}, false).dump(2) + "\n");
}

// Ten nodes, two on another driver and one at MTU 1500: values grouped, the commonest first.
std::vector<Node> fleet() {
  Snapshot a = compare_fixture("node-a.json");
  std::vector<Node> nodes;
  for (int i = 1; i <= 10; ++i) {
    Snapshot s = a;
    if (i >= 9) s.gpu.nvml->driver_version = std::string("580.82.09");
    if (i == 4) s.network->interfaces[0].mtu = 1500;
    nodes.push_back({fmt::format("node{:02}", i), std::move(s)});
  }
  return nodes;
}

TEST(CompareRender, AFleetGroupsEachReadingsValues) {
  Comparison c = compare_nodes(fleet());
  std::string text = render_compare_text(c, false);
  EXPECT_THAT(text, HasSubstr("580.95.05: 8 nodes (node01...); 580.82.09: node09, node10"));
  EXPECT_THAT(text, HasSubstr("9000: 9 nodes (node01...); 1500: node04"));
  EXPECT_THAT(text, Not(HasSubstr("node05  ")));  // no column per node
  testing::compare_or_update(testing::golden_dir() / "compare-fleet.txt", text);
}

TEST(CompareRender, JsonHasEveryNodesValueAndTheVerdict) {
  Comparison c = compare_nodes(fleet());
  nlohmann::json j = render_compare_json(c, {{"node11", "printed no snapshot: oops", true}}, false);
  EXPECT_TRUE(j["breaks_job"].get<bool>());
  EXPECT_EQ(j["nodes"].size(), 10u);
  EXPECT_EQ(j["problems"][0]["node"], "node11");
  bool seen = false;
  for (const auto& row : j["rows"]) {
    if (row["reading"] != "driver") continue;
    seen = true;
    EXPECT_EQ(row["values"]["node10"], "580.82.09");
    EXPECT_EQ(row["severity"], "look");
    EXPECT_EQ(row["state"], "differs");
  }
  EXPECT_TRUE(seen);
}

TEST(CompareRender, NotRecordedIsSaidSo) {
  Snapshot a = compare_fixture("node-a.json");
  Snapshot b = a;
  b.network = not_recorded<net::NetReadings>();
  std::string text = render_compare_text(compare_nodes(pair(a, b)), false);
  EXPECT_THAT(text, HasSubstr("Not recorded on spark-b"));
  EXPECT_THAT(text, HasSubstr("MTU 0000:01:00.0"));
  EXPECT_THAT(text, HasSubstr("No reading differs between the 2 nodes; 20 readings not recorded"));
  EXPECT_THAT(render_compare_text(compare_nodes(pair(a, b)), true), HasSubstr("not recorded"));
}

}  // namespace
}  // namespace sparkdoc::compare
