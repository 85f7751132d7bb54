// read_gpu() through the process-lifetime loaders, steered to the fakes by the override
// variables. The loaders read the variables once; ctest runs each case in a process of its own.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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

TEST(ReadNvmlOnce, ReadsWhatTheInstanceReadsAndUnloadsItsOwnLoad) {
  setenv(Nvml::kLibraryEnv, SPARKDOC_FAKE_NVML, 1);
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", (std::string(SPARKDOC_FIXTURES) + "/gpu/gb10.json").c_str(),
         1);
  Reading<NvmlReadings> once = read_nvml_once();
  ASSERT_TRUE(once) << once.reason();
  ASSERT_EQ(once->devices.size(), 1u);
  EXPECT_EQ(once->devices[0].name, Reading<std::string>("NVIDIA GB10"));
  // Nothing holds the library any more: RTLD_NOLOAD finds it only while it is mapped.
  EXPECT_EQ(dlopen(SPARKDOC_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD), nullptr);

  // The process-wide loader reads the same, and keeps its load.
  EXPECT_EQ(read_nvml_live(), once);
  void* held = dlopen(SPARKDOC_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(held, nullptr);
  if (held != nullptr) dlclose(held);
  // A second read once leaves the instance's load in place.
  EXPECT_EQ(read_nvml_once(), once);
  EXPECT_TRUE(read_nvml_live());
}

TEST(ReadNvmlOnce, WithoutTheLibraryItSaysWhy) {
  setenv(Nvml::kLibraryEnv, "/nonexistent/libnvidia-ml.so.1", 1);
  Reading<NvmlReadings> once = read_nvml_once();
  ASSERT_FALSE(once);
  EXPECT_THAT(once.reason(), ::testing::HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

}  // namespace
}  // namespace sparkdoc::gpu
