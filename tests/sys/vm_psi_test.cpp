#include <gtest/gtest.h>

#include "sys/psi.h"
#include "sys/vm.h"
#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

TEST(Sysctl, ParsesOneInteger) {
  EXPECT_EQ(parse_sysctl_int("1048576\n").value(), 1048576);
  EXPECT_EQ(parse_sysctl_int("  45166").value(), 45166);
  EXPECT_EQ(parse_sysctl_int("-1\n").value(), -1);
  EXPECT_FALSE(parse_sysctl_int(""));
  EXPECT_FALSE(parse_sysctl_int("500 100\n"));
  EXPECT_FALSE(parse_sysctl_int("fast\n"));
  EXPECT_FALSE(parse_sysctl_int("99999999999999999999999\n"));
}

TEST(VmTunables, EachReadingStandsAlone) {
  testing::TempTree tree;
  tree.write("proc/sys/vm/min_free_kbytes", "1048576\n");
  tree.write("proc/sys/vm/vfs_cache_pressure", "garbage\n");
  auto vm = read_vm_tunables(Root(tree.path()));
  ASSERT_TRUE(vm.min_free_kbytes.ok());
  EXPECT_EQ(*vm.min_free_kbytes, 1048576);
  ASSERT_FALSE(vm.vfs_cache_pressure.ok());
  EXPECT_EQ(vm.vfs_cache_pressure.missing().why, Why::kError);
  ASSERT_FALSE(vm.swappiness.ok());
  EXPECT_EQ(vm.swappiness.missing().why, Why::kAbsent);
}

TEST(Psi, ParsesSomeAndFull) {
  auto psi = parse_psi(
      "some avg10=1.25 avg60=0.12 avg300=0.05 total=1204551\n"
      "full avg10=0.50 avg60=0.03 avg300=0.01 total=800112\n");
  ASSERT_TRUE(psi) << psi.error().message;
  EXPECT_DOUBLE_EQ(psi->some.avg10, 1.25);
  EXPECT_DOUBLE_EQ(psi->some.avg60, 0.12);
  EXPECT_DOUBLE_EQ(psi->some.avg300, 0.05);
  EXPECT_EQ(psi->some.total_us, 1204551u);
  ASSERT_TRUE(psi->full);
  EXPECT_DOUBLE_EQ(psi->full->avg10, 0.5);
  EXPECT_EQ(psi->full->total_us, 800112u);
}

TEST(Psi, IdleMachineAllZero) {
  auto psi = parse_psi(
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(psi);
  EXPECT_EQ(psi->some, PsiLine{});
}

TEST(Psi, SomeOnlyAsOnCpuPressure) {
  auto psi = parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(psi);
  EXPECT_FALSE(psi->full);
}

TEST(Psi, RejectsGarbageAndTruncation) {
  EXPECT_FALSE(parse_psi(""));
  EXPECT_FALSE(parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));  // no some
  EXPECT_FALSE(parse_psi("some avg10=0.00 avg60=0.00 avg3"));
  EXPECT_FALSE(parse_psi("some avg10=x avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n"));
  EXPECT_FALSE(parse_psi("some avg10 avg60 avg300 total\n"));
  EXPECT_FALSE(parse_psi("hello world\n"));
}

TEST(Psi, MissingFileMeansKernelWithoutPsi) {
  testing::TempTree tree;
  auto psi = read_memory_pressure(Root(tree.path()));
  ASSERT_FALSE(psi);
  EXPECT_EQ(psi.error().why, Why::kAbsent);
  EXPECT_EQ(psi.error().message, "kernel without PSI");
}

}  // namespace
}  // namespace sparkdoc::sys
