// Finding shared objects and their owners in a site-packages folder.
#include "audit/scan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "audit/stamp.h"

namespace sparkdoc::audit {
namespace {

TEST(SharedObjectName, WhatTheLoaderAndPythonImport) {
  for (const char* yes : {"x.so", "_C.abi3.so", "libcudart.so.13", "libcudnn.so.9.19.0",
                          "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"}) {
    EXPECT_TRUE(is_shared_object_name(yes)) << yes;
  }
  for (const char* no : {".so", "x.so.bak", "data.sorted", "x.so.1a", "part-0.sources.parquet",
                         "x.py", "x.so."}) {
    EXPECT_FALSE(is_shared_object_name(no)) << no;
  }
}

TEST(RecordPath, PlainAndQuoted) {
  EXPECT_EQ(record_path("torch/lib/libc10.so,sha256=abc,123"), "torch/lib/libc10.so");
  EXPECT_EQ(record_path("\"a,b/x.so\",sha256=abc,1"), "a,b/x.so");
  EXPECT_EQ(record_path("\"q\"\"x.so\",,"), "q\"x.so");
  EXPECT_EQ(record_path(""), "");
  EXPECT_EQ(record_path("\"unterminated"), "unterminated");
}

TEST(OwnerOf, RecordThenTopFolderThenModuleName) {
  SitePackages site;
  site.owner = {{"flash_attn/layers/x.so", "flash_attn"}};
  EXPECT_EQ(owner_of(site, "flash_attn/layers/x.so"), "flash_attn");
  EXPECT_EQ(owner_of(site, "flash_attn/other.so"), "flash_attn");
  EXPECT_EQ(owner_of(site, "selective_scan_cuda.cpython-312-x86_64-linux-gnu.so"),
            "selective_scan_cuda");
  EXPECT_EQ(owner_of(site, "cv2/cv2.abi3.so"), "cv2");
}

// Taken at once on many threads, the stamps are what one stat after another gives, missing
// paths and none at all included.
TEST(StampsOf, WhatStatGivesForEachPathOnAnyNumberOfThreads) {
  namespace fs = std::filesystem;
  const std::string dir = ::testing::TempDir() + "sparkdoc-stamps-" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/a/b");
  std::ofstream(dir + "/a/b/c.so") << "x";
  std::vector<std::string> paths = {dir,
                                    dir + "/a",
                                    dir + "/a/b",
                                    dir + "/a/b/c.so",
                                    dir + "/gone",
                                    "",
                                    "/proc/self/nonexistent"};
  for (int i = 0; i < 40; ++i) paths.push_back(dir + "/a/b/c.so");
  // qemu-user (the aarch64 run in CI) can hang in pthread_create: there on this thread alone.
  const unsigned threads = std::getenv("SPARKDOC_TEST_EMULATOR") != nullptr ? 1 : 16;
  for (unsigned n : {threads, 1u, 0u}) {
    SCOPED_TRACE(n);
    const auto stamps = stamps_of(paths, n);
    ASSERT_EQ(stamps.size(), paths.size());
    for (size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(stamps[i], stamp_of(paths[i])) << paths[i];
    EXPECT_TRUE(stamps[3].has_value());
    EXPECT_FALSE(stamps[4].has_value());
  }
  EXPECT_TRUE(stamps_of({}, threads).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sparkdoc::audit
