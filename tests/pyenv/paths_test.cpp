#include "core/paths.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fixture.h"

namespace sparkdoc::pyenv {
namespace {

using testing::fixture;
using testing::ScratchDir;

TEST(Paths, Normalize) {
  EXPECT_EQ(normalize_path("/a//b/./c/"), "/a/b/c");
  EXPECT_EQ(normalize_path("/x/torch/lib/../../nvidia/cu13/lib"), "/x/nvidia/cu13/lib");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(normalize_path("a/../.."), "..");
  EXPECT_EQ(normalize_path(""), "");
  EXPECT_EQ(parent_path("/usr/bin/python3"), "/usr/bin");
  EXPECT_EQ(parent_path("/usr"), "/");
  EXPECT_EQ(parent_path("/"), "/");
  EXPECT_EQ(join_path("/usr/", "bin"), "/usr/bin");
  EXPECT_EQ(file_name("/usr/bin/python3.12"), "python3.12");
}

TEST(Paths, ResolvesLinksInsideTheRoot) {
  Root root(fixture("ngc"));
  EXPECT_EQ(resolve_symlinks(root, "/usr/bin/python3"), "/usr/bin/python3.12");
  EXPECT_EQ(resolve_symlinks(root, "/workspace/venv/lib64/python3.12"),
            "/workspace/venv/lib/python3.12");
  EXPECT_EQ(resolve_symlinks(root, "/usr/bin/../bin/python3"), "/usr/bin/python3.12");
  EXPECT_FALSE(resolve_symlinks(root, "/usr/bin/python2"));
  EXPECT_FALSE(resolve_symlinks(root, "usr/bin/python3"));
}

TEST(Paths, AbsoluteLinkTargetsStayInTheRootAndLoopsEnd) {
  ScratchDir dir;
  dir.write("opt/python/bin/python3.12", "");
  std::filesystem::create_directories(dir.path() + "/usr/bin");
  std::filesystem::create_symlink("/opt/python/bin/python3.12", dir.path() + "/usr/bin/python3");
  std::filesystem::create_symlink("loop_b", dir.path() + "/usr/bin/loop_a");
  std::filesystem::create_symlink("loop_a", dir.path() + "/usr/bin/loop_b");
  Root root(dir.path());
  EXPECT_EQ(resolve_symlinks(root, "/usr/bin/python3"), "/opt/python/bin/python3.12");
  EXPECT_FALSE(resolve_symlinks(root, "/usr/bin/loop_a"));
}

}  // namespace
}  // namespace sparkdoc::pyenv
