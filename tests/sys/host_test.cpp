#include "sys/host.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

TEST(CpuList, Counts) {
  EXPECT_EQ(parse_cpu_list("0-19\n").value(), 20u);
  EXPECT_EQ(parse_cpu_list("0").value(), 1u);
  EXPECT_EQ(parse_cpu_list("0-7,16-23\n").value(), 16u);
  EXPECT_EQ(parse_cpu_list("0,2,4-5").value(), 4u);
}

TEST(CpuList, RejectsGarbage) {
  EXPECT_FALSE(parse_cpu_list(""));
  EXPECT_FALSE(parse_cpu_list("\n"));
  EXPECT_FALSE(parse_cpu_list("7-3"));
  EXPECT_FALSE(parse_cpu_list("0-"));
  EXPECT_FALSE(parse_cpu_list("a-b"));
  EXPECT_FALSE(parse_cpu_list("0,,1"));
  EXPECT_FALSE(parse_cpu_list("0-18446744073709551615"));
}

TEST(ReadHost, FixtureTreeUsesKernelFiles) {
  testing::TempTree tree;
  tree.write("proc/sys/kernel/arch", "aarch64\n");
  tree.write("proc/sys/kernel/osrelease", "6.11.0-1016-nvidia\n");
  tree.write("proc/sys/kernel/hostname", "spark-01\n");
  tree.write("sys/devices/system/cpu/online", "0-19\n");
  tree.write("sys/class/dmi/id/product_name", "NVIDIA_DGX_Spark\n");
  Host host = read_host(Root(tree.path()));
  EXPECT_EQ(host.cpu_arch.value_or(""), "aarch64");
  EXPECT_EQ(host.kernel_release.value_or(""), "6.11.0-1016-nvidia");
  EXPECT_EQ(host.hostname.value_or(""), "spark-01");
  EXPECT_EQ(host.dmi_product.value_or(""), "NVIDIA_DGX_Spark");
  EXPECT_EQ(host.cpu_count.value_or(0), 20u);
  ASSERT_FALSE(host.is_root.ok());
  EXPECT_EQ(host.is_root.missing().why, Why::kAbsent);
}

TEST(ReadHost, EmptyFixtureIsAllAbsent) {
  testing::TempTree tree;
  Host host = read_host(Root(tree.path()));
  EXPECT_FALSE(host.cpu_arch.ok());
  EXPECT_FALSE(host.kernel_release.ok());
  EXPECT_FALSE(host.hostname.ok());
  EXPECT_FALSE(host.dmi_product.ok());
  EXPECT_FALSE(host.cpu_count.ok());
  EXPECT_FALSE(host.is_root.ok());
}

TEST(ReadHost, LiveMachine) {
  Host host = read_host(Root());
  ASSERT_TRUE(host.cpu_arch.ok());
  EXPECT_FALSE(host.cpu_arch->empty());
  EXPECT_TRUE(host.kernel_release.ok());
  EXPECT_TRUE(host.hostname.ok());
  ASSERT_TRUE(host.cpu_count.ok());
  EXPECT_GE(*host.cpu_count, 1u);
  EXPECT_TRUE(host.is_root.ok());
}

}  // namespace
}  // namespace sparkdoc::sys
