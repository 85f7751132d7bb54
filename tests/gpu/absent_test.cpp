// read_gpu() when the override variables name files that do not exist: the readings are absent
// with reasons, nothing throws. One case per executable, as the loaders are process-lifetime.
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/probe.h"

namespace sparkdoc::gpu {
namespace {

TEST(ReadGpuAbsent, MissingLibrariesGiveAbsentReadings) {
  setenv(Nvml::kLibraryEnv, "/nonexistent/libnvidia-ml.so.1", 1);
  setenv(Cuda::kLibraryEnv, "/nonexistent/libcuda.so.1", 1);
  GpuReadings r = read_gpu();
  ASSERT_FALSE(r.nvml);
  EXPECT_EQ(r.nvml.missing().why, Why::kAbsent);
  EXPECT_THAT(r.nvml.missing().detail,
              ::testing::StartsWith("/nonexistent/libnvidia-ml.so.1 not loaded: "));
  EXPECT_THAT(r.nvml.missing().detail,
              ::testing::EndsWith("(named by SPARKDOC_NVML_LIBRARY)"));
  ASSERT_FALSE(r.cuda);
  EXPECT_EQ(r.cuda.missing().why, Why::kAbsent);
  EXPECT_THAT(r.cuda.missing().detail,
              ::testing::EndsWith("(named by SPARKDOC_CUDA_LIBRARY)"));
}

}  // namespace
}  // namespace sparkdoc::gpu
