// sparkdoc's cache folder: the rule that finds it, the folder made private and refused when it
// is another user's, and the files kept in it: read only when they are this user's own and no
// one else could have written them, written whole or not at all.
#include "core/cache_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CacheFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) /
            ("cache_dir_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_);
  }
  void TearDown() override { fs::remove_all(base_); }
  fs::path base_;
};

TEST(CacheRoot, SparkdocCacheThenXdgThenHome) {
  ::setenv("SPARKDOC_CACHE", "/a/cache", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(cache_root_from_env().value(), "/a/cache");
  ::unsetenv("SPARKDOC_CACHE");
  EXPECT_EQ(cache_root_from_env().value(), "/xdg/sparkdoc");
  ::setenv("XDG_CACHE_HOME", "relative", 1);
  EXPECT_EQ(cache_root_from_env().value(), "/home/u/.cache/sparkdoc");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_FALSE(cache_root_from_env());
}

TEST_F(CacheFolder, MissingFoldersAreMadePrivate) {
  const fs::path root = base_ / "home" / ".cache" / "sparkdoc";
  auto dir = open_cache_root(root.string());
  ASSERT_TRUE(dir) << dir.error().message;
  for (const fs::path& p : {base_ / "home", base_ / "home" / ".cache", root}) {
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << p;
  }
}

TEST_F(CacheFolder, AnotherUsersFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a folder to another user";
  const fs::path root = base_ / "theirs";
  fs::create_directories(root);
  ASSERT_EQ(::chown(root.c_str(), 4321, 4321), 0);
  auto dir = open_cache_root(root.string());
  ASSERT_FALSE(dir);
  EXPECT_THAT(dir.error().message, HasSubstr("belongs to uid 4321"));
}

TEST_F(CacheFolder, APrivateFileReadsAndAnyOtherIsRefused) {
  auto dir = open_dir(base_.string());
  ASSERT_TRUE(dir);
  ASSERT_TRUE(write_file_in(*dir, "facts", "one", 0600));
  const unsigned euid = ::geteuid();
  EXPECT_EQ(read_private_file(*dir, "facts", 100, euid).value(), "one");
  // Written whole again, over the old one.
  ASSERT_TRUE(write_file_in(*dir, "facts", "two, longer", 0600));
  EXPECT_EQ(read_private_file(*dir, "facts", 100, euid).value(), "two, longer");
  EXPECT_EQ(std::distance(fs::directory_iterator(base_), fs::directory_iterator()), 1);

  EXPECT_THAT(read_private_file(*dir, "facts", 5, euid).error().message, HasSubstr("larger"));
  EXPECT_EQ(read_private_file(*dir, "none", 100, euid).error().why, Why::kAbsent);
  EXPECT_THAT(read_private_file(*dir, "facts", 100, euid + 1).error().message,
              HasSubstr("belongs to uid"));
  fs::create_symlink(base_ / "facts", base_ / "link");
  EXPECT_THAT(read_private_file(*dir, "link", 100, euid).error().message,
              HasSubstr("symbolic link"));
  ::chmod((base_ / "facts").c_str(), 0620);
  EXPECT_THAT(read_private_file(*dir, "facts", 100, euid).error().message,
              HasSubstr("others can write"));
  ASSERT_EQ(::mkfifo((base_ / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(read_private_file(*dir, "fifo", 100, euid).error().message,
              HasSubstr("not a regular file"));
  // Nothing is written through a link or over a FIFO.
  EXPECT_FALSE(write_file_in(*dir, "link", "x", 0600));
  EXPECT_FALSE(write_file_in(*dir, "fifo", "x", 0600));
  std::ifstream in(base_ / "facts");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "two, longer");
}

}  // namespace
}  // namespace sparkdoc
