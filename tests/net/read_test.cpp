// The network probes over two paired GB10 Sparks as fixture trees (tests/fixtures/net/): node a
// links /sys/class like the kernel, node b holds some class entries as plain folders. The
// facts come from field-2026 §6: the CX-7's four RDMA devices, MT4129 on fw 28.45.4028, Port 1
// Active at 200 Gb/s on the cabled port and Down at 40 on the unused one, the RoCE v2 IPv4 GID
// at index 3 on one node and 5 on the other, MTU 9000 missing on one twin, the images'
// /etc/nccl.conf, logind's RemoveIPC and the hot-plug flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "model/net_json.h"
#include "net/config.h"
#include "net/interfaces.h"
#include "net/probe.h"
#include "net/rdma.h"
#include "sys/temp_tree.h"

namespace sparkdoc::net {
namespace {

using sys::testing::TempTree;
using ::testing::ElementsAre;
using ::testing::Pair;

Root fixture(const std::string& node) {
  return Root(std::string(SPARKDOC_FIXTURES) + "/net/" + node);
}

const Interface* find_interface(const NetReadings& r, std::string_view name) {
  for (const auto& i : r.interfaces) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

const RdmaDevice* find_device(const NetReadings& r, std::string_view name) {
  for (const auto& d : r.rdma) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// The readings as JSON, the file's modification time left out (a checkout sets it).
std::string golden_text(NetReadings r) {
  if (r.nccl_conf) r.nccl_conf->mtime_s = 0;
  if (r.nccl_conf_env_file) r.nccl_conf_env_file->mtime_s = 0;
  return nlohmann::json(r).dump(2) + "\n";
}

class NetFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(NetFixture, MatchesGolden) {
  NetReadings r = read_network(fixture(GetParam()), {});
  sparkdoc::testing::compare_or_update(
      sparkdoc::testing::golden_dir() / ("net-" + GetParam() + ".json"), golden_text(r));
}

TEST_P(NetFixture, RoundTripsThroughJson) {
  NetReadings r = read_network(fixture(GetParam()), {});
  EXPECT_EQ(nlohmann::json(r).get<NetReadings>(), r);
}

INSTANTIATE_TEST_SUITE_P(Sparks, NetFixture, ::testing::Values("gb10-spark-a", "gb10-spark-b"));

TEST(NetRead, SparkAInterfaces) {
  NetReadings r = read_network(fixture("gb10-spark-a"), {});
  std::vector<std::string> names;
  for (const auto& i : r.interfaces) names.push_back(i.name);
  EXPECT_THAT(names, ElementsAre("docker0", "enP2p1s0f0np0", "enP2p1s0f1np1", "enP7s7",
                                 "enp1s0f0np0", "enp1s0f1np1", "lo"));
  const Interface* cabled = find_interface(r, "enp1s0f0np0");
  ASSERT_NE(cabled, nullptr);
  EXPECT_EQ(cabled->type, 1u);
  EXPECT_EQ(cabled->mtu, 9000u);
  EXPECT_EQ(cabled->speed_mbps, 200000);
  EXPECT_EQ(cabled->operstate, "up");
  EXPECT_EQ(cabled->carrier, true);
  EXPECT_EQ(cabled->driver, "mlx5_core");
  EXPECT_EQ(cabled->pci_address, "0000:01:00.0");
  const Interface* unused = find_interface(r, "enp1s0f1np1");
  ASSERT_NE(unused, nullptr);
  EXPECT_FALSE(unused->speed_mbps);  // "-1"
  EXPECT_EQ(unused->carrier, false);
  const Interface* twin = find_interface(r, "enP2p1s0f0np0");
  ASSERT_NE(twin, nullptr);
  EXPECT_EQ(twin->pci_address, "0002:01:00.0");
  const Interface* wired = find_interface(r, "enP7s7");
  ASSERT_NE(wired, nullptr);
  EXPECT_EQ(wired->driver, "r8169");
  EXPECT_EQ(wired->speed_mbps, 1000);
  const Interface* lo = find_interface(r, "lo");
  ASSERT_NE(lo, nullptr);
  EXPECT_EQ(lo->type, 772u);
  EXPECT_EQ(lo->driver, "");
  EXPECT_EQ(lo->pci_address, "");
  EXPECT_FALSE(lo->speed_mbps);  // no speed file
}

TEST(NetRead, SparkARdma) {
  NetReadings r = read_network(fixture("gb10-spark-a"), {});
  ASSERT_EQ(r.rdma.size(), 4u);
  const RdmaDevice* d = find_device(r, "rocep1s0f0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->hca_type, "MT4129");
  EXPECT_EQ(d->fw_ver, "28.45.4028");
  EXPECT_EQ(d->pci_address, "0000:01:00.0");
  EXPECT_THAT(d->netdevs, ElementsAre("enp1s0f0np0"));
  ASSERT_EQ(d->ports.size(), 1u);
  const RdmaPort& port = d->ports[0];
  EXPECT_EQ(port.state, "4: ACTIVE");
  EXPECT_EQ(port.phys_state, "5: LinkUp");
  EXPECT_EQ(port.rate_gbps, 200.0);
  EXPECT_EQ(port.link_layer, "Ethernet");
  ASSERT_EQ(port.gids.size(), 4u);
  EXPECT_EQ(port.gids[3].index, 3u);
  EXPECT_EQ(port.gids[3].type, "RoCE v2");
  EXPECT_EQ(port.gids[3].gid, "0000:0000:0000:0000:0000:ffff:c0a8:6401");
  EXPECT_EQ(port.gids[3].netdev, "enp1s0f0np0");
  const RdmaDevice* unused = find_device(r, "rocep1s0f1");
  ASSERT_NE(unused, nullptr);
  EXPECT_EQ(unused->ports[0].state, "1: DOWN");
  EXPECT_EQ(unused->ports[0].rate_gbps, 40.0);
  EXPECT_TRUE(unused->ports[0].gids.empty());
}

TEST(NetRead, SparkBHasItsGidAtFiveAndOneTwinAt1500) {
  NetReadings r = read_network(fixture("gb10-spark-b"), {});
  const RdmaDevice* d = find_device(r, "rocep1s0f1");  // plain folder in /sys/class
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->pci_address, "0000:01:00.1");
  EXPECT_THAT(d->netdevs, ElementsAre("enp1s0f1np1"));
  ASSERT_EQ(d->ports.size(), 1u);
  ASSERT_EQ(d->ports[0].gids.size(), 6u);
  EXPECT_EQ(d->ports[0].gids[5].index, 5u);
  EXPECT_EQ(d->ports[0].gids[5].type, "RoCE v2");
  EXPECT_EQ(d->ports[0].gids[5].gid, "0000:0000:0000:0000:0000:ffff:c0a8:6402");
  EXPECT_EQ(find_interface(r, "enp1s0f1np1")->mtu, 9000u);
  EXPECT_EQ(find_interface(r, "enP2p1s0f1np1")->mtu, 1500u);
  ASSERT_NE(find_interface(r, "lo"), nullptr);  // a plain folder
  EXPECT_EQ(find_interface(r, "lo")->type, 772u);
}

TEST(NetRead, NcclConfOnANotOnB) {
  NetReadings a = read_network(fixture("gb10-spark-a"), {});
  ASSERT_TRUE(a.nccl_conf) << a.nccl_conf.reason();
  EXPECT_EQ(a.nccl_conf->path, "/etc/nccl.conf");
  EXPECT_THAT(a.nccl_conf->settings, ElementsAre(Pair("NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "1"),
                                                 Pair("NCCL_IB_USE_INLINE", "1")));
  EXPECT_GT(a.nccl_conf->mtime_s, 0);
  EXPECT_FALSE(a.nccl_conf_env_file);
  NetReadings b = read_network(fixture("gb10-spark-b"), {});
  ASSERT_FALSE(b.nccl_conf);
  EXPECT_EQ(b.nccl_conf.missing().why, Why::kAbsent);
  EXPECT_EQ(b.nccl_conf.missing().detail, "no /etc/nccl.conf");
}

TEST(NetRead, NcclConfFileFromTheEnvironment) {
  NetReadings a = read_network(fixture("gb10-spark-a"), {{"NCCL_CONF_FILE", "/etc/nccl.conf"}});
  ASSERT_TRUE(a.nccl_conf_env_file) << a.nccl_conf_env_file.reason();
  EXPECT_EQ(a.nccl_conf_env_file->settings.size(), 2u);
  NetReadings b =
      read_network(fixture("gb10-spark-b"), {{"NCCL_CONF_FILE", "/home/dgx/nccl.conf"}});
  ASSERT_FALSE(b.nccl_conf_env_file);
  EXPECT_EQ(b.nccl_conf_env_file.missing().detail, "no /home/dgx/nccl.conf");
}

TEST(NetRead, LogindUnsetOnAAndADropInOnB) {
  NetReadings a = read_network(fixture("gb10-spark-a"), {});
  ASSERT_TRUE(a.logind);
  EXPECT_FALSE(a.logind->remove_ipc);
  EXPECT_THAT(a.logind->files_read, ElementsAre("/etc/systemd/logind.conf"));
  EXPECT_TRUE(a.logind->lingering.empty());
  EXPECT_THAT(a.logind->session_users, ElementsAre("dgx"));
  EXPECT_FALSE(a.cx7_hotplug_flag);

  NetReadings b = read_network(fixture("gb10-spark-b"), {});
  ASSERT_TRUE(b.logind);
  EXPECT_EQ(b.logind->remove_ipc, false);
  // /etc's 50-remove-ipc.conf masks /usr/lib's, which says yes.
  EXPECT_EQ(b.logind->remove_ipc_source, "/etc/systemd/logind.conf.d/50-remove-ipc.conf");
  EXPECT_THAT(b.logind->files_read, ElementsAre("/etc/systemd/logind.conf",
                                                "/usr/lib/systemd/logind.conf.d/10-vendor.conf",
                                                "/etc/systemd/logind.conf.d/50-remove-ipc.conf"));
  EXPECT_THAT(b.logind->lingering, ElementsAre("dgx"));
  EXPECT_THAT(b.logind->session_users, ElementsAre("dgx", "1001"));
  EXPECT_TRUE(b.cx7_hotplug_flag);
}

TEST(NetRead, SystemNcclListedOncePerFolder) {
  NetReadings a = read_network(fixture("gb10-spark-a"), {});
  ASSERT_EQ(a.system_nccl.size(), 1u);
  EXPECT_EQ(a.system_nccl[0].path, "/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9");
  EXPECT_EQ(a.system_nccl[0].version, "2.28.9");
  // lib64 is a link to targets/sbsa-linux/lib: one file, named by the first folder searched.
  NetReadings b = read_network(fixture("gb10-spark-b"), {});
  ASSERT_EQ(b.system_nccl.size(), 1u);
  EXPECT_EQ(b.system_nccl[0].path, "/usr/local/cuda/lib64/libnccl.so.2.27.7");
}

TEST(NetRead, AnEmptyRootReadsAsNothing) {
  TempTree tree;
  NetReadings r = read_network(Root(tree.path()), {});
  EXPECT_TRUE(r.interfaces.empty());
  EXPECT_TRUE(r.rdma.empty());
  ASSERT_FALSE(r.nccl_conf);
  EXPECT_EQ(r.nccl_conf.missing().why, Why::kAbsent);
  ASSERT_TRUE(r.logind);
  EXPECT_FALSE(r.logind->remove_ipc);
  EXPECT_TRUE(r.logind->files_read.empty());
  EXPECT_FALSE(r.cx7_hotplug_flag);
  EXPECT_TRUE(r.system_nccl.empty());
}

TEST(NetRead, GarbageInEveryFileIsNoCrash) {
  TempTree tree;
  const std::string garbage = "\xff\xfe\x1b[2K\n-1\n";
  for (const char* f :
       {"type", "mtu", "speed", "operstate", "carrier", "carrier_changes", "address"}) {
    tree.write(std::string("sys/class/net/bad0/") + f, garbage);
  }
  tree.symlink("not-pci", "sys/class/net/bad0/device");
  tree.write("sys/class/infiniband/bad_0/hca_type", garbage);
  tree.write("sys/class/infiniband/bad_0/ports/1/rate", garbage);
  tree.write("sys/class/infiniband/bad_0/ports/1/gids/0", garbage);
  tree.write("sys/class/infiniband/bad_0/ports/x/rate", garbage);
  tree.mkdir("sys/class/infiniband/bad_0/ports/1/gids/1");  // a folder where a file belongs
  tree.write("etc/nccl.conf", garbage + "=\n==\n");
  tree.write("etc/systemd/logind.conf", garbage + "[Login\nRemoveIPC\n");
  tree.write("etc/passwd", garbage + ":::\n");
  tree.mkdir("run/user/notanumber");
  NetReadings r = read_network(Root(tree.path()), {});
  ASSERT_EQ(r.interfaces.size(), 1u);
  const Interface& i = r.interfaces[0];
  EXPECT_FALSE(i.mtu);
  EXPECT_FALSE(i.speed_mbps);
  EXPECT_FALSE(i.carrier);
  EXPECT_EQ(i.operstate, "???[2K?-1");
  EXPECT_EQ(i.pci_address, "");
  EXPECT_EQ(i.driver, "");
  ASSERT_EQ(r.rdma.size(), 1u);
  ASSERT_EQ(r.rdma[0].ports.size(), 1u);
  EXPECT_FALSE(r.rdma[0].ports[0].rate_gbps);
  EXPECT_TRUE(r.rdma[0].ports[0].gids.empty());
  EXPECT_TRUE(r.nccl_conf);
  EXPECT_FALSE(r.logind->remove_ipc);
  EXPECT_TRUE(r.logind->session_users.empty());
  // It all still writes as JSON and reads back.
  EXPECT_EQ(nlohmann::json(r).get<NetReadings>(), r);
}

// A real GID table has 255 slots per port, most of them empty; the probe reads them all.
TEST(NetRead, FullGidTablesStayFast) {
  TempTree tree;
  for (int dev = 0; dev < 4; ++dev) {
    std::string base = "sys/class/infiniband/dev" + std::to_string(dev) + "/ports/1/";
    for (int slot = 0; slot < 255; ++slot) {
      tree.write(base + "gids/" + std::to_string(slot),
                 slot == 3 ? "0000:0000:0000:0000:0000:ffff:c0a8:6401\n"
                           : "0000:0000:0000:0000:0000:0000:0000:0000\n");
    }
    tree.write(base + "gid_attrs/types/3", "RoCE v2\n");
  }
  auto start = std::chrono::steady_clock::now();
  auto devices = read_rdma(Root(tree.path()));
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("read_ms", std::to_string(ms));
  ASSERT_TRUE(devices);
  ASSERT_EQ(devices->size(), 4u);
  for (const auto& d : *devices) {
    ASSERT_EQ(d.ports.size(), 1u);
    ASSERT_EQ(d.ports[0].gids.size(), 1u);
    EXPECT_EQ(d.ports[0].gids[0].index, 3u);
    EXPECT_EQ(d.ports[0].gids[0].type, "RoCE v2");
  }
  // Generous for a sanitizer build on a loaded CI machine; ~1020 small reads.
  EXPECT_LT(ms, 2000.0);
}

}  // namespace
}  // namespace sparkdoc::net
