// Links resolved inside a Root: relative ones as the kernel's sysfs holds them, absolute ones
// from the root, and none leading out of it.
#include "net/tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "sys/temp_tree.h"

namespace sparkdoc::net {
namespace {

using sys::testing::TempTree;

TEST(NetTree, RelativeLinksAsSysfsHasThem) {
  TempTree tree;
  tree.write("sys/devices/pci0000:00/0000:01:00.0/net/eth9/mtu", "9000\n");
  tree.symlink("../../devices/pci0000:00/0000:01:00.0/net/eth9", "sys/class/net/eth9");
  Root root(tree.path());
  auto path = resolve(root, "/sys/class/net/eth9");
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/sys/devices/pci0000:00/0000:01:00.0/net/eth9");
  auto dir = Folder::open(root, "/sys/class/net/eth9");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->value("mtu"), "9000");
}

TEST(NetTree, AbsoluteLinksStartAtTheRoot) {
  TempTree tree;
  tree.write("opt/conf/nccl.conf", "X=1\n");
  tree.symlink("/opt/conf", "etc/conf");
  auto path = resolve(Root(tree.path()), "/etc/conf/nccl.conf");
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/opt/conf/nccl.conf");
}

TEST(NetTree, NoLinkLeadsOutOfTheRoot) {
  TempTree tree;
  tree.mkdir("sys/class/net");
  tree.write("etc/hostname", "inside\n");
  // Ten levels up from a folder three deep is still the root, as ".." of "/" is "/".
  tree.symlink("../../../../../../../../../../etc", "sys/class/net/up");
  auto path = resolve(Root(tree.path()), "/sys/class/net/up/hostname");
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/etc/hostname");
  auto dir = Folder::open(Root(tree.path()), "/sys/class/net/up");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->value("hostname"), "inside");
}

TEST(NetTree, LoopsAndMissingPartsAreErrors) {
  TempTree tree;
  tree.symlink("b", "x/a");
  tree.symlink("a", "x/b");
  auto loop = resolve(Root(tree.path()), "/x/a");
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error().why, Why::kError);
  auto missing = resolve(Root(tree.path()), "/x/nothing/here");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);
  EXPECT_FALSE(Folder::open(Root(tree.path()), "/x/nothing"));
}

// A link at a file's own name is resolved inside the root too: this one's absolute target is
// the fixture's /etc/passwd, which is not there, never the machine's.
TEST(NetTree, ALinkAtTheFileStaysInTheRoot) {
  TempTree tree;
  tree.write("etc/hosts", "inside\n");
  tree.symlink("/etc/passwd", "sys/class/net/eth0/mtu");
  tree.symlink("../../../../etc/hosts", "sys/class/net/eth0/address");
  auto dir = Folder::open(Root(tree.path()), "/sys/class/net/eth0");
  ASSERT_TRUE(dir);
  auto mtu = dir->read("mtu");
  ASSERT_FALSE(mtu);
  EXPECT_EQ(mtu.error().why, Why::kAbsent);
  EXPECT_EQ(dir->value("address"), "inside");
}

TEST(NetTree, LinkNamesNeedNoTarget) {
  TempTree tree;
  tree.symlink("../../../../bus/pci/drivers/mlx5_core", "sys/devices/pci/0000:01:00.0/driver");
  auto dir = Folder::open(Root(tree.path()), "/sys/devices/pci/0000:01:00.0");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->link_name("driver"), "mlx5_core");
  EXPECT_FALSE(dir->link_name("nothing"));
}

// A GID table is read in one pass; a FIFO there would block a reader forever, so only what the
// folder lists as a regular file is opened.
TEST(NetTree, ReadFilesOpensOnlyRegularFiles) {
  TempTree tree;
  tree.write("gids/0", "fe80:0000:0000:0000:4ebb:47ff:fe2c:9a10\n");
  tree.write("gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  tree.mkdir("gids/2");
  ASSERT_EQ(::mkfifo((tree.path() + "/gids/3").c_str(), 0600), 0);
  tree.symlink("0", "gids/4");
  auto dir = Folder::open(Root(tree.path()), "/gids");
  ASSERT_TRUE(dir);
  auto files = dir->read_files(16);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "0");
  EXPECT_EQ(files[0].second, "fe80:0000:0000:0000:4ebb:47ff:fe2c:9a10\n");
  EXPECT_EQ(files[1].first, "1");
  EXPECT_EQ(dir->read_files(1).size(), 1u);
}

TEST(NetTree, AFileIsNotAFolder) {
  TempTree tree;
  tree.write("sys/class/net/bonding_masters", "\n");
  auto dir = Folder::open(Root(tree.path()), "/sys/class/net/bonding_masters");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::net
