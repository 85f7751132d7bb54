// Finding shared objects and their owners in a site-packages folder.
#include "audit/scan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sparkdoc::audit
