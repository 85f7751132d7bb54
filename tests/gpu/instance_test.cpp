// read_gpu() through the process-lifetime loaders, steered to the fakes by the override
// variables. The loaders read the variables once, so this executable holds this one case.
#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/probe.h"

namespace sparkdoc::gpu {
namespace {

TEST(ReadGpuInstance, LoadsTheLibrariesTheOverrideVariablesName) {
  setenv(Nvml::kLibraryEnv, SPARKDOC_FAKE_NVML, 1);
  setenv(Cuda::kLibraryEnv, SPARKDOC_FAKE_CUDA, 1);
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", (std::string(SPARKDOC_FIXTURES) + "/gpu/gb10.json").c_str(),
         1);
  GpuReadings r = read_gpu();
  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  EXPECT_THAT(r.nvml->library, ::testing::EndsWith("libsparkdoc_fake_nvml.so"));
  ASSERT_EQ(r.nvml->devices.size(), 1u);
  EXPECT_EQ(r.nvml->devices[0].name, Reading<std::string>("NVIDIA GB10"));
  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  EXPECT_THAT(r.cuda->library, ::testing::EndsWith("libsparkdoc_fake_cuda.so"));
  ASSERT_EQ(r.cuda->devices.size(), 1u);
  EXPECT_EQ(r.cuda->devices[0].integrated, Reading<bool>(true));

  // The same instance serves every later call.
  EXPECT_EQ(&Nvml::instance(), &Nvml::instance());
  EXPECT_EQ(read_gpu(), r);
}

}  // namespace
}  // namespace sparkdoc::gpu
