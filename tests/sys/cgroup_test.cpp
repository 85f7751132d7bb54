#include "sys/cgroup.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

TEST(Cgroup, V2InsideDockerReadsRoot) {
  auto m = parse_cgroup("0::/\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->has_unified);
  EXPECT_FALSE(m->has_v1);
  EXPECT_EQ(m->unified_path, "/");
  EXPECT_EQ(cgroup_version(*m, false), 2);
  EXPECT_EQ(memory_cgroup_path(*m, 2), "/");
}

TEST(Cgroup, V2HostSessionPath) {
  auto m = parse_cgroup(
      "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
      "app-org.gnome.Terminal.slice/vte-spawn-4f1c.scope\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->unified_path,
            "/user.slice/user-1000.slice/user@1000.service/app.slice/"
            "app-org.gnome.Terminal.slice/vte-spawn-4f1c.scope");
}

TEST(Cgroup, HybridHostIsV1WithMemoryController) {
  constexpr std::string_view kHybrid =
      "12:hugetlb:/\n"
      "9:net_cls,net_prio:/\n"
      "6:memory:/user.slice/user-1000.slice/session-2.scope\n"
      "3:cpu,cpuacct:/user.slice\n"
      "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n"
      "0::/user.slice/user-1000.slice/session-2.scope\n";
  auto m = parse_cgroup(kHybrid);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->has_v1);
  EXPECT_TRUE(m->has_unified);
  EXPECT_EQ(m->memory_path, "/user.slice/user-1000.slice/session-2.scope");
  EXPECT_EQ(cgroup_version(*m, false), 1);
  EXPECT_EQ(cgroup_version(*m, true), 2);  // a cgroup2 mount at /sys/fs/cgroup decides
  EXPECT_EQ(m->lines.size(), 6u);
}

TEST(Cgroup, V1DockerWithoutNamespace) {
  auto m =
      parse_cgroup("4:memory:/docker/3f4a9c1e7b2d8e6f\n2:cpu,cpuacct:/docker/3f4a9c1e7b2d8e6f\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(cgroup_version(*m, false), 1);
  EXPECT_EQ(memory_cgroup_path(*m, 1), "/docker/3f4a9c1e7b2d8e6f");
}

TEST(Cgroup, PathsMayContainColons) {
  auto m = parse_cgroup("0::/machine.slice/libpod-a:b.scope\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->unified_path, "/machine.slice/libpod-a:b.scope");
}

TEST(Cgroup, RejectsGarbage) {
  EXPECT_FALSE(parse_cgroup(""));
  EXPECT_FALSE(parse_cgroup("\n\n"));
  EXPECT_FALSE(parse_cgroup("0:/\n"));
  EXPECT_FALSE(parse_cgroup("x::/\n"));
  EXPECT_FALSE(parse_cgroup("hello\n"));
}

TEST(CgroupMemoryLimit, UnlimitedSpellings) {
  auto v2 = parse_cgroup_memory_limit("max\n");
  ASSERT_TRUE(v2);
  EXPECT_FALSE(*v2);
  auto v1 = parse_cgroup_memory_limit("9223372036854771712\n");
  ASSERT_TRUE(v1);
  EXPECT_FALSE(*v1);
  auto v1_64k_pages = parse_cgroup_memory_limit("9223372036854710272\n");
  ASSERT_TRUE(v1_64k_pages);
  EXPECT_FALSE(*v1_64k_pages);
}

TEST(CgroupMemoryLimit, RealLimits) {
  EXPECT_EQ(parse_cgroup_memory_limit("68719476736\n").value(), 68719476736u);
  EXPECT_EQ(parse_cgroup_memory_limit("0").value(), 0u);
  EXPECT_FALSE(parse_cgroup_memory_limit(""));
  EXPECT_FALSE(parse_cgroup_memory_limit("64G"));
  EXPECT_FALSE(parse_cgroup_memory_limit("max max"));
}

TEST(ReadCgroup, V2TakesTheSmallestLimitOnThePath) {
  testing::TempTree tree;
  tree.write("proc/self/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
  tree.write("proc/1/cgroup", "0::/init.scope\n");
  tree.write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  tree.write("sys/fs/cgroup/user.slice/memory.max", "max\n");
  tree.write("sys/fs/cgroup/user.slice/user-1000.slice/memory.max", "100000000000\n");
  tree.write("sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/memory.max", "max\n");
  auto info = read_cgroup(Root(tree.path()));
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->version, 2);
  EXPECT_EQ(info->self_path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_EQ(info->pid1_path, "/init.scope");
  EXPECT_EQ(info->memory_limit_bytes, 100000000000u);
}

TEST(ReadCgroup, NamespaceEscapeIsNotWalked) {
  testing::TempTree tree;
  tree.write("proc/self/cgroup", "0::/../../..\n");
  tree.write("sys/fs/cgroup/cgroup.controllers", "memory\n");
  tree.write("sys/fs/cgroup/memory.max", "8589934592\n");
  tree.write("memory.max", "1\n");  // outside the mount; must never be read
  auto info = read_cgroup(Root(tree.path()));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->memory_limit_bytes, 8589934592u);
  EXPECT_FALSE(info->pid1_path);
}

TEST(ReadCgroup, MissingFileIsAbsent) {
  testing::TempTree tree;
  auto info = read_cgroup(Root(tree.path()));
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::sys
