#include "facts/network.h"

#include <gtest/gtest.h>

namespace sparkdoc::facts {
namespace {

net::RdmaDevice device(std::string name, std::string pci, std::string netdev, bool active) {
  net::RdmaDevice d;
  d.name = std::move(name);
  d.pci_address = std::move(pci);
  d.netdevs = {std::move(netdev)};
  net::RdmaPort port;
  port.number = 1;
  port.state = active ? "4: ACTIVE" : "1: DOWN";
  d.ports.push_back(port);
  return d;
}

// Two paired Sparks' devices: port 0 cabled (both halves up), port 1 unused.
Snapshot gb10_snapshot() {
  Snapshot s;
  net::NetReadings net;
  net.rdma = {device("rocep1s0f0", "0000:01:00.0", "enp1s0f0np0", true),
              device("rocep1s0f1", "0000:01:00.1", "enp1s0f1np1", false),
              device("roceP2p1s0f0", "0002:01:00.0", "enP2p1s0f0np0", true),
              device("roceP2p1s0f1", "0002:01:00.1", "enP2p1s0f1np1", false)};
  net.nccl_conf = Reading<net::NcclConfFile>::absent(Why::kAbsent, "no /etc/nccl.conf");
  s.network = net;
  return s;
}

TEST(PortHalves, PairsTheFunctionsOfBothPciDomains) {
  auto halves = cx7_port_halves(*gb10_snapshot().network);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(halves[0].function, "01:00.0");
  EXPECT_EQ(halves[0].devices, (std::vector<std::string>{"rocep1s0f0", "roceP2p1s0f0"}));
  EXPECT_EQ(halves[0].netdevs, (std::vector<std::string>{"enp1s0f0np0", "enP2p1s0f0np0"}));
  EXPECT_EQ(halves[1].devices, (std::vector<std::string>{"rocep1s0f1", "roceP2p1s0f1"}));
}

TEST(PortHalves, ADeviceWithoutATwinIsInNoPair) {
  net::NetReadings net;
  net.rdma = {device("mlx5_0", "0000:17:00.0", "ens1f0", true),
              device("mlx5_1", "0000:17:00.1", "ens1f1", true)};
  EXPECT_TRUE(cx7_port_halves(net).empty());
  EXPECT_EQ(pci_function("0000:17:00.1"), "17:00.1");
  EXPECT_EQ(pci_function("garbage"), "");
  EXPECT_EQ(pci_function("0000:17"), "");
}

TEST(NcclList, ReadsExclusionExactnessAndPorts) {
  NcclList list = parse_nccl_list(" ^=mlx5_0:1, mlx5_1 ,,");
  EXPECT_TRUE(list.exclude);
  EXPECT_TRUE(list.exact);
  ASSERT_EQ(list.entries.size(), 2u);
  EXPECT_EQ(list.entries[0].name, "mlx5_0");
  EXPECT_EQ(list.entries[0].port, 1u);
  EXPECT_EQ(list.entries[1].name, "mlx5_1");
  EXPECT_FALSE(list.entries[1].port);
  EXPECT_FALSE(nccl_list_selects(list, "mlx5_0"));
  EXPECT_TRUE(nccl_list_selects(list, "mlx5_10"));
  // Without "=", names are prefixes: "roce" takes all four devices.
  EXPECT_TRUE(nccl_list_selects(parse_nccl_list("roce"), "roceP2p1s0f0"));
  EXPECT_FALSE(nccl_list_selects(parse_nccl_list("=rocep1s0f0"), "rocep1s0f0x"));
}

TEST(NcclIbDevices, UnsetTakesEveryDeviceWithAnActivePort) {
  NcclIbDevices d = nccl_ib_devices(gb10_snapshot());
  EXPECT_EQ(d.source, "");
  EXPECT_EQ(d.devices, (std::vector<std::string>{"rocep1s0f0", "roceP2p1s0f0"}));
}

TEST(NcclIbDevices, TheEnvironmentComesBeforeNcclConf) {
  Snapshot s = gb10_snapshot();
  net::NcclConfFile conf;
  conf.path = "/etc/nccl.conf";
  conf.settings["NCCL_IB_HCA"] = "rocep1s0f0,roceP2p1s0f0";
  s.network->nccl_conf = conf;
  NcclIbDevices from_conf = nccl_ib_devices(s);
  EXPECT_EQ(from_conf.source, "/etc/nccl.conf");
  EXPECT_EQ(from_conf.devices, (std::vector<std::string>{"rocep1s0f0", "roceP2p1s0f0"}));
  s.env["NCCL_IB_HCA"] = "=rocep1s0f0";
  NcclIbDevices from_env = nccl_ib_devices(s);
  EXPECT_EQ(from_env.source, "environment");
  EXPECT_EQ(from_env.setting, "=rocep1s0f0");
  EXPECT_EQ(from_env.devices, (std::vector<std::string>{"rocep1s0f0"}));
}

TEST(NcclIbDevices, NothingWhenTheNetworkWasNotRecorded) {
  Snapshot s;
  s.env["NCCL_IB_HCA"] = "rocep1s0f0";
  EXPECT_TRUE(nccl_ib_devices(s).devices.empty());
}

}  // namespace
}  // namespace sparkdoc::facts
