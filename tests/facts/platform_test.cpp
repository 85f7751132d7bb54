#include "facts/platform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../checks/snapshots.h"
#include "core/units.h"

namespace sparkdoc::checks {
namespace {

using ::testing::Contains;
using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;
using testing::nvml_device;

TEST(ClassifyPlatform, HealthyGb10IsDgxSpark) {
  facts::Platform p = facts::classify_platform(gb10_snapshot());
  EXPECT_EQ(p.kind, facts::PlatformKind::kDgxSpark);
  EXPECT_EQ(p.key, "dgx-spark");
  EXPECT_TRUE(p.unified_memory());
  ASSERT_TRUE(p.compute_capability);
  EXPECT_EQ(*p.compute_capability, (gpu::ComputeCapability{12, 1}));
  EXPECT_EQ(p.gpu_name, "NVIDIA GB10");
  EXPECT_THAT(p.evidence, Contains("NVML compute capability 12.1"));
  EXPECT_THAT(p.evidence, Contains("CUDA reports an integrated device (shares host memory)"));
  EXPECT_THAT(p.evidence, Contains("NVML memory info not supported (no dedicated framebuffer)"));
  EXPECT_THAT(p.evidence, Contains("aarch64 host"));
  EXPECT_THAT(p.description, HasSubstr("DGX Spark"));
}

TEST(ClassifyPlatform, GenericGpuNameOnGb10IsStillDgxSpark) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).name = std::string("NVIDIA JMJWOA-Generic-GPU");
  s.gpu.cuda->devices[0].name = std::string("NVIDIA JMJWOA-Generic-GPU");
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kDgxSpark);
  EXPECT_EQ(p.gpu_name, "NVIDIA JMJWOA-Generic-GPU");
}

TEST(ClassifyPlatform, Gb10WithoutCudaReadingUsesNvmlNotSupported) {
  Snapshot s = gb10_snapshot();
  s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, "libcuda.so.1 not found");
  EXPECT_EQ(facts::classify_platform(s).kind, facts::PlatformKind::kDgxSpark);
}

TEST(ClassifyPlatform, Gb10WhoseNvmlReportsHostSizedMemory) {
  // Some drivers are said to answer with total == MemTotal instead of NOT_SUPPORTED.
  Snapshot s = gb10_snapshot();
  s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, "libcuda.so.1 not found");
  nvml_device(s).memory = gpu::MemoryInfo{s.meminfo->mem_total_bytes, 100 * kGB,
                                          s.meminfo->mem_total_bytes - 100 * kGB};
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kDgxSpark);
  EXPECT_THAT(p.evidence, Contains(HasSubstr("within 10% of MemTotal")));
}

TEST(ClassifyPlatform, Gb10FromCudaAloneWhenNvmlMissing) {
  Snapshot s = gb10_snapshot();
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kDgxSpark);
  EXPECT_THAT(p.evidence, Contains("CUDA compute capability 12.1"));
}

TEST(ClassifyPlatform, Cc121WithoutUnifiedEvidenceIsNotSpark) {
  Snapshot s = gb10_snapshot();
  s.gpu.cuda->devices[0].integrated = false;
  nvml_device(s).memory = gpu::MemoryInfo{32 * kGB, 30 * kGB, 2 * kGB};
  EXPECT_EQ(facts::classify_platform(s).kind, facts::PlatformKind::kDiscrete);
}

TEST(ClassifyPlatform, DiscreteCardMatchingHostRamIsNotUnifiedWhenCudaSaysDiscrete) {
  Snapshot s = h200_snapshot();
  s.meminfo->mem_total_bytes = nvml_device(s).memory->total_bytes;
  EXPECT_EQ(facts::classify_platform(s).kind, facts::PlatformKind::kDiscrete);
}

TEST(ClassifyPlatform, OtherIntegratedGpuIsUnified) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).name = std::string("NVIDIA Thor");
  nvml_device(s).compute_capability = gpu::ComputeCapability{11, 0};
  s.gpu.cuda->devices[0].compute_capability = gpu::ComputeCapability{11, 0};
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kUnified);
  EXPECT_EQ(p.key, "nvidia-uma");
  EXPECT_TRUE(p.unified_memory());
}

TEST(ClassifyPlatform, H200IsDiscrete) {
  facts::Platform p = facts::classify_platform(h200_snapshot());
  EXPECT_EQ(p.kind, facts::PlatformKind::kDiscrete);
  EXPECT_EQ(p.key, "nvidia-discrete");
  EXPECT_FALSE(p.unified_memory());
  EXPECT_THAT(p.description, HasSubstr("NVIDIA H200"));
  EXPECT_THAT(p.evidence, Contains("CUDA reports a device with its own memory"));
}

TEST(ClassifyPlatform, NothingReadableIsNoGpu) {
  Snapshot s = gb10_snapshot();
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, "libcuda.so.1 not found");
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kNoGpu);
  EXPECT_EQ(p.key, "no-gpu");
  EXPECT_FALSE(p.compute_capability);
  EXPECT_THAT(p.evidence, Contains("NVML: absent: libnvidia-ml.so.1 not found"));
}

TEST(ClassifyPlatform, CudaInitErrorWithoutDevicesIsNoGpu) {
  Snapshot s;
  gpu::CudaReadings cuda;
  cuda.init_error = "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected";
  s.gpu.cuda = cuda;
  facts::Platform p = facts::classify_platform(s);
  EXPECT_EQ(p.kind, facts::PlatformKind::kNoGpu);
  EXPECT_THAT(p.evidence, Contains(HasSubstr("CUDA_ERROR_NO_DEVICE")));
}

}  // namespace
}  // namespace sparkdoc::checks
