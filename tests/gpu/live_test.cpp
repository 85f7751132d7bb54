// read_gpu() on the machine's own driver (label gpu). Skips where there is no NVIDIA driver.
// Prints the readings as JSON, so a run on a new device records what its driver answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "gpu/context.h"
#include "gpu/probe.h"
#include "model/gpu_json.h"

namespace sparkdoc::gpu {
namespace {

TEST(LiveGpu, ReadsTheInstalledDriver) {
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "/dev/nvidiactl does not exist: no NVIDIA driver on this machine";
  }
  GpuReadings r = read_gpu();
  std::cout << nlohmann::json(r).dump(2) << "\n";

  ASSERT_TRUE(r.nvml) << r.nvml.reason();
  const NvmlReadings& nvml = *r.nvml;
  EXPECT_TRUE(nvml.driver_version) << nvml.driver_version.reason();
  EXPECT_TRUE(nvml.cuda_driver_version) << nvml.cuda_driver_version.reason();
  ASSERT_FALSE(nvml.devices.empty());
  // From R580 on, the counters are fields 74, 76 and 269-271; a driver that refuses them means
  // the field ids are wrong again.
  bool counters_expected = nvml.driver_version && std::stoi(*nvml.driver_version) >= 580;
  std::set<std::string> nvml_names;
  for (const Device& d : nvml.devices) {
    if (counters_expected) {
      const ClockEventCounters& c = d.clock_event_counters;
      for (const Reading<uint64_t>* counter : {&c.sw_power_cap_ns, &c.sync_boost_ns,
                                               &c.sw_thermal_ns, &c.hw_thermal_ns,
                                               &c.hw_power_brake_ns}) {
        EXPECT_TRUE(*counter) << counter->reason();
      }
    }
    ASSERT_TRUE(d.name) << d.name.reason();
    nvml_names.insert(*d.name);
    ASSERT_TRUE(d.uuid) << d.uuid.reason();
    EXPECT_THAT(*d.uuid, ::testing::StartsWith("GPU-"));
    EXPECT_TRUE(d.pci_bus_id) << d.pci_bus_id.reason();
    ASSERT_TRUE(d.compute_capability) << d.compute_capability.reason();
    EXPECT_GE(d.compute_capability->major, 3);
    EXPECT_TRUE(d.temperature_c) << d.temperature_c.reason();
    EXPECT_TRUE(d.power_usage_mw) << d.power_usage_mw.reason();
    EXPECT_TRUE(d.processes) << d.processes.reason();
    if (d.memory) {
      EXPECT_GT(d.memory->total_bytes, 0u);
      EXPECT_LE(d.memory->used_bytes, d.memory->total_bytes);
    } else {
      // Only an integrated GPU (GB10) may decline; a discrete one has a framebuffer to report.
      EXPECT_EQ(d.memory.missing().why, Why::kNotSupported) << d.memory.reason();
    }
  }

  ASSERT_TRUE(r.cuda) << r.cuda.reason();
  const CudaReadings& cuda = *r.cuda;
  ASSERT_FALSE(cuda.init_error.has_value()) << *cuda.init_error;
  EXPECT_EQ(cuda.driver_version, nvml.cuda_driver_version);
  ASSERT_FALSE(cuda.devices.empty());
  for (const CudaDevice& c : cuda.devices) {
    ASSERT_TRUE(c.name) << c.name.reason();
    EXPECT_TRUE(nvml_names.count(*c.name)) << *c.name;
    EXPECT_TRUE(c.compute_capability) << c.compute_capability.reason();
    EXPECT_TRUE(c.total_memory_bytes) << c.total_memory_bytes.reason();
    EXPECT_TRUE(c.integrated) << c.integrated.reason();
    EXPECT_TRUE(c.multiprocessors) << c.multiprocessors.reason();
  }
}

// The fresh context of `sparkdoc clean` against the real driver: the figures must agree with
// what cuDeviceTotalMem and NVML say about the same device.
TEST(LiveGpu, FreshContextReportsTheDriversFreeMemory) {
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "/dev/nvidiactl does not exist: no NVIDIA driver on this machine";
  }
  const Result<Cuda>& cuda = Cuda::instance();
  ASSERT_TRUE(cuda) << cuda.error().message;
  auto m = fresh_context_mem_info(*cuda, 0);
  ASSERT_TRUE(m) << m.error().message;
  std::cout << "cuMemGetInfo: free " << m->free_bytes << " of " << m->total_bytes << " bytes in "
            << m->elapsed_ms << " ms\n";
  EXPECT_GT(m->total_bytes, 0u);
  EXPECT_LE(m->free_bytes, m->total_bytes);
  GpuReadings r = read_gpu();
  ASSERT_TRUE(r.cuda);
  ASSERT_FALSE(r.cuda->devices.empty());
  if (r.cuda->devices[0].total_memory_bytes) {
    EXPECT_EQ(m->total_bytes, *r.cuda->devices[0].total_memory_bytes);
  }
  // A second context in the same process works too: the first was released.
  EXPECT_TRUE(fresh_context_mem_info(*cuda, 0));
}

}  // namespace
}  // namespace sparkdoc::gpu
