#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/common.h"
#include "checks/known_good_matrix.h"
#include "checks/native_code.h"
#include "core/cuda_sonames.h"
#include "core/units.h"
#include "core/version_compare.h"

namespace sparkdoc::checks {
namespace {

using ::testing::ElementsAre;

TEST(VersionCompare, ReleaseSegmentsIgnoreTagsAndLocalLabels) {
  EXPECT_THAT(release_segments("2.9.0a0+145a3a7.nv25.10"), ElementsAre(2u, 9u, 0u));
  EXPECT_THAT(release_segments("2.11.0+cu130"), ElementsAre(2u, 11u, 0u));
  EXPECT_THAT(release_segments("v5.5.3"), ElementsAre(5u, 5u, 3u));
  EXPECT_THAT(release_segments("1!2.0.post1"), ElementsAre(2u, 0u));
  EXPECT_THAT(release_segments("5.3.0.dev0"), ElementsAre(5u, 3u, 0u));
  EXPECT_TRUE(release_segments("garbage").empty());
  EXPECT_TRUE(release_segments("").empty());
}

TEST(VersionCompare, NumericNotLexical) {
  EXPECT_GT(compare_versions("5.10.0", "5.5.3"), 0);
  EXPECT_LT(compare_versions("4.56.2", "5.5.3"), 0);
  EXPECT_EQ(compare_versions("5.5", "5.5.0"), 0);
  EXPECT_EQ(compare_versions("5.5.3+local", "5.5.3"), 0);
  EXPECT_TRUE(same_release_prefix("2.9.1", "2.9.0a0", 2));
  EXPECT_FALSE(same_release_prefix("2.9.1", "2.10", 2));
  EXPECT_FALSE(same_release_prefix("2", "2.0", 2));
}

TEST(KnownGoodMatrix, TorchToTriton) {
  EXPECT_EQ(expected_triton("2.9.0a0+145a3a7.nv25.10"), "3.5");
  EXPECT_EQ(expected_triton("2.11.0+cu130"), "3.6");
  EXPECT_EQ(expected_triton("2.10.1"), "3.6");
  EXPECT_EQ(expected_triton("2.1.0"), std::nullopt);
  EXPECT_EQ(expected_transformers("2026.3.4"), "5.2.0");
  EXPECT_EQ(expected_transformers("2026.3.17"), "5.3.0");
  EXPECT_EQ(expected_transformers("2026.7.3"), std::nullopt);
}

TEST(CudaSonames, MajorsTheSonamesImply) {
  EXPECT_EQ(cuda_major_of_soname("libcudart.so.12"), 12);
  EXPECT_EQ(cuda_major_of_soname("libcudart.so.13"), 13);
  EXPECT_EQ(cuda_major_of_soname("libcublasLt.so.13.1.0.3"), 13);
  EXPECT_EQ(cuda_major_of_soname("/x/y/libnvrtc.so.12"), 12);
  EXPECT_EQ(cuda_major_of_soname("libnvJitLink.so.13"), 13);
  EXPECT_EQ(cuda_major_of_soname("libcupti.so.13"), 13);
  EXPECT_EQ(cuda_major_of_soname("libcufft.so.11"), 12);
  EXPECT_EQ(cuda_major_of_soname("libcufft.so.12"), 13);
  EXPECT_EQ(cuda_major_of_soname("libcusolver.so.11"), 12);
  EXPECT_EQ(cuda_major_of_soname("libcusolver.so.12"), 13);
}

TEST(CudaSonames, LibrariesThatDoNotTell) {
  for (const char* so :
       {"libcusparse.so.12", "libcurand.so.10", "libcudnn.so.9", "libcudnn_graph.so.9",
        "libnccl.so.2", "libcusparseLt.so.0", "libcufile.so.0", "libnvshmem_host.so.3",
        "libcuda.so.1", "libcudart.so", "cudart.so.12", "libc.so.6"}) {
    EXPECT_EQ(cuda_major_of_soname(so), std::nullopt) << so;
  }
}

TEST(CommonHelpers, Durations) {
  EXPECT_EQ(format_duration_ns(10'800'240'649'000), "3.0 h");
  EXPECT_EQ(format_duration_ns(173'453'251'000), "2.9 min");
  EXPECT_EQ(format_duration_ns(1'195'386'000), "1.2 s");
  EXPECT_EQ(format_duration_ns(403'805'000), "403.8 ms");
}

}  // namespace
}  // namespace sparkdoc::checks

namespace sparkdoc::checks {
namespace {

TEST(TargetNames, SortAsArchitecturesNotAsStrings) {
  std::vector<std::string> names = {"sm_120", "sm_80",   "sm_90", "sm_120a",
                                    "sm_80",  "sm_100f", "sm_86"};
  sort_target_names(names);
  EXPECT_THAT(names,
              ::testing::ElementsAre("sm_80", "sm_86", "sm_90", "sm_100f", "sm_120", "sm_120a"));
  std::vector<std::string> ptx = {"compute_90", "garbage", "compute_121a", "compute_75"};
  sort_target_names(ptx);
  EXPECT_THAT(ptx, ::testing::ElementsAre("compute_75", "compute_90", "compute_121a", "garbage"));
}

// A package whose only shared object cannot be read is not "ok": its import fails.
TEST(NativeVerdicts, AnUnreadableSharedObjectWarnsItsPackage) {
  audit::NativeAudit facts;
  facts.files.push_back(audit::NativeFile{
      "badpkg/_core.so",
      "badpkg",
      "truncated: its section header table ends at byte 121280 of a 3000-byte file",
      {},
      {},
      false,
      ""});
  facts.versions["badpkg"] = "1.0";
  NativeVerdict v = judge_native(facts, std::nullopt);
  ASSERT_EQ(v.packages.size(), 1u);
  EXPECT_EQ(worst_severity(v.packages[0].notes), Severity::kWarn);
  EXPECT_THAT(v.packages[0].notes[0].text,
              ::testing::HasSubstr("1 of its 1 shared object cannot be read"));
  EXPECT_THAT(v.packages[0].notes[0].text,
              ::testing::HasSubstr("pip install --force-reinstall badpkg==1.0"));
}

}  // namespace
}  // namespace sparkdoc::checks
