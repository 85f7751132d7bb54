// The sysfs values and library names the network probes parse, as the kernel writes them.
#include "net/values.h"

#include <gtest/gtest.h>

namespace sparkdoc::net {
namespace {

TEST(NetValues, UnsignedFilesTakeTheNewline) {
  EXPECT_EQ(parse_sysfs_uint("9000\n"), 9000u);
  EXPECT_EQ(parse_sysfs_uint("1500"), 1500u);
  EXPECT_FALSE(parse_sysfs_uint(""));
  EXPECT_FALSE(parse_sysfs_uint("-1\n"));
  EXPECT_FALSE(parse_sysfs_uint("12a"));
  EXPECT_FALSE(parse_sysfs_uint("99999999999999999999999"));
}

TEST(NetValues, SpeedMinusOneIsNoLink) {
  EXPECT_EQ(parse_speed_mbps("200000\n"), 200000);
  EXPECT_EQ(parse_speed_mbps("1000"), 1000);
  EXPECT_FALSE(parse_speed_mbps("-1\n"));
  EXPECT_FALSE(parse_speed_mbps("-5"));
  EXPECT_FALSE(parse_speed_mbps("fast"));
}

TEST(NetValues, Carrier) {
  EXPECT_EQ(parse_carrier("1\n"), true);
  EXPECT_EQ(parse_carrier("0\n"), false);
  EXPECT_FALSE(parse_carrier("2"));
  EXPECT_FALSE(parse_carrier(""));
}

// ibstat's "Rate: 200" is sysfs's "200 Gb/sec (4X HDR)"; an unused GB10 port shows 40 (4X QDR)
// (geerlingguy/sbc-reviews#92 in field-2026 §6).
TEST(NetValues, RateAsSysfsWritesIt) {
  EXPECT_EQ(parse_rate_gbps("200 Gb/sec (4X HDR)\n"), 200.0);
  EXPECT_EQ(parse_rate_gbps("40 Gb/sec (4X QDR)"), 40.0);
  EXPECT_EQ(parse_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(parse_rate_gbps("100 Gb/sec"), 100.0);
  EXPECT_FALSE(parse_rate_gbps("200"));
  EXPECT_FALSE(parse_rate_gbps("fast Gb/sec (4X HDR)"));
  EXPECT_FALSE(parse_rate_gbps("1e3 Gb/sec"));
  EXPECT_FALSE(parse_rate_gbps(".5 Gb/sec"));
  EXPECT_FALSE(parse_rate_gbps("200 Mb/sec"));
}

TEST(NetValues, GidZeroIsAnEmptySlot) {
  EXPECT_EQ(parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:6401\n"),
            "0000:0000:0000:0000:0000:ffff:c0a8:6401");
  EXPECT_EQ(parse_gid("FE80:0000:0000:0000:4EBB:47FF:FE2C:9A10"),
            "fe80:0000:0000:0000:4ebb:47ff:fe2c:9a10");
  EXPECT_FALSE(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_FALSE(parse_gid("::ffff:192.168.100.1"));
  EXPECT_FALSE(parse_gid("0000:0000:0000:0000:0000:ffff:c0a8"));
  EXPECT_FALSE(parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:640g"));
  EXPECT_FALSE(parse_gid(""));
}

TEST(NetValues, PciAddress) {
  EXPECT_TRUE(is_pci_address("0000:01:00.0"));
  EXPECT_TRUE(is_pci_address("0002:01:00.1"));
  EXPECT_TRUE(is_pci_address("000f:01:00.0"));
  EXPECT_FALSE(is_pci_address("virtio2"));
  EXPECT_FALSE(is_pci_address("01:00.0"));
  EXPECT_FALSE(is_pci_address("0000:01:00"));
  EXPECT_FALSE(is_pci_address("0000:01:00.10"));
  EXPECT_FALSE(is_pci_address(""));
}

TEST(NetValues, NcclLibraryNames) {
  EXPECT_EQ(parse_nccl_library_name("libnccl.so.2.28.9"), "2.28.9");
  EXPECT_EQ(parse_nccl_library_name("libnccl.so.2.30.7"), "2.30.7");
  EXPECT_FALSE(parse_nccl_library_name("libnccl.so.2"));
  EXPECT_FALSE(parse_nccl_library_name("libnccl.so"));
  EXPECT_FALSE(parse_nccl_library_name("libnccl.so.2.28.9.bak"));
  EXPECT_FALSE(parse_nccl_library_name("libnccl-net.so.2.28.9"));
  EXPECT_FALSE(parse_nccl_library_name("libnccl.so.2.28."));
}

TEST(NetValues, CleanValueKeepsJsonSafeAscii) {
  EXPECT_EQ(clean_value("  enp1s0f0np0\n"), "enp1s0f0np0");
  EXPECT_EQ(clean_value("a\x1b[2Kb\xff"), "a?[2Kb?");
  EXPECT_EQ(clean_value(std::string(300, 'x')).size(), 256u);
}

}  // namespace
}  // namespace sparkdoc::net
