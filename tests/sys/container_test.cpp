#include "sys/container.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

using namespace std::string_literals;

constexpr std::string_view kDockerMountinfo =
    "1107 935 0:151 / / rw,relatime master:366 - overlay overlay "
    "rw,lowerdir=/var/lib/docker/overlay2/l/5QH3XJ6V7Y,upperdir=/var/lib/docker/overlay2/9d1c/diff,"
    "workdir=/var/lib/docker/overlay2/9d1c/work,nouserxattr\n"
    "1108 1107 0:154 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "1112 1111 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw\n"
    "1116 1107 259:2 /var/lib/docker/containers/"
    "3f4a9c1e7b2d8e6f0a5c4b3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f/hostname /etc/hostname "
    "rw,relatime - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n";

TEST(Mountinfo, DockerContainer) {
  auto m = parse_mountinfo(kDockerMountinfo);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->docker);
  EXPECT_TRUE(m->overlay_root);
  EXPECT_FALSE(m->kubepods);
}

TEST(Mountinfo, HostRunningDockerIsNotAContainer) {
  auto m = parse_mountinfo(
      "29 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
      "512 29 0:48 / /var/lib/docker/overlay2/1b2c/merged rw,relatime - overlay overlay "
      "rw,lowerdir=/var/lib/docker/overlay2/l/AB12\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, MountinfoMarkers{});
}

TEST(Mountinfo, KubernetesPod) {
  auto m = parse_mountinfo(
      "2301 2200 0:310 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/containerd/l/1\n"
      "2320 2301 259:1 /var/lib/kubelet/pods/8a1f/etc-hosts /etc/hosts rw,relatime - ext4 "
      "/dev/nvme0n1p1 rw\n"
      "2330 2301 0:40 /kubepods.slice/kubepods-burstable.slice /sys/fs/cgroup ro - cgroup2 "
      "cgroup rw\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->kubepods);
  EXPECT_TRUE(m->overlay_root);
  EXPECT_FALSE(m->docker);
}

TEST(Mountinfo, TopmostRootMountWins) {
  auto m = parse_mountinfo(
      "20 1 0:2 / / rw - rootfs rootfs rw\n"
      "30 20 0:40 / / rw - overlay overlay rw,lowerdir=/a\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->overlay_root);
  auto under = parse_mountinfo(
      "30 1 0:40 / / rw - overlay overlay rw,lowerdir=/a\n"
      "31 30 259:2 / / rw - ext4 /dev/sda1 rw\n");
  ASSERT_TRUE(under);
  EXPECT_FALSE(under->overlay_root);
}

TEST(Mountinfo, OptionalFieldsBeforeSeparator) {
  auto m = parse_mountinfo("36 35 98:0 /mnt1 / rw,noatime master:1 shared:2 - overlay ov rw\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->overlay_root);
}

TEST(Mountinfo, RejectsGarbage) {
  EXPECT_FALSE(parse_mountinfo(""));
  EXPECT_FALSE(parse_mountinfo("not mountinfo at all\n"));
  EXPECT_FALSE(parse_mountinfo("1 2 - \n"));
  EXPECT_FALSE(parse_mountinfo("1107 935 0:151 / / rw,relatime - "));  // truncated
}

TEST(ContainerMarkers, PodmanFilesAndEnvironment) {
  testing::TempTree tree;
  tree.write("run/.containerenv", "engine=\"podman-4.9.3\"\n");
  tree.write("proc/1/environ", "PATH=/usr/bin\0container=podman\0TERM=xterm\0"s);
  auto m = read_container_markers(Root(tree.path()));
  EXPECT_TRUE(m.containerenv);
  EXPECT_FALSE(m.dockerenv);
  EXPECT_FALSE(m.singularity);
  EXPECT_EQ(m.pid1_container_env, "podman");
  EXPECT_FALSE(m.mountinfo_overlay_root);  // no mountinfo: markers stay false
}

TEST(ContainerMarkers, Singularity) {
  testing::TempTree tree;
  tree.mkdir(".singularity.d/env");
  auto m = read_container_markers(Root(tree.path()));
  EXPECT_TRUE(m.singularity);
  EXPECT_FALSE(m.pid1_container_env);
}

TEST(ContainerMarkers, SingularityMarkerMustBeADirectory) {
  testing::TempTree tree;
  tree.write(".singularity.d", "");
  EXPECT_FALSE(read_container_markers(Root(tree.path())).singularity);
}

}  // namespace
}  // namespace sparkdoc::sys
