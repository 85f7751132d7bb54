// The GPU clock lock through NVML (gpu/clocks.h) against the fake library: the GPUs listed by
// UUID, the lock and the reset on the GPU with that UUID (the fake records every call in
// SPARKDOC_FAKE_NVML_CALLS), and each failure with what to do. Never the real NVML.
#include "gpu/clocks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../sys/temp_tree.h"

namespace sparkdoc::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kGb10Uuid = "GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c";

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/gpu/" + name;
}

// The fake with a fixture of its own and a fresh call record, for one test.
class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    calls_ = tree_.path() + "/calls";
    setenv("SPARKDOC_FAKE_NVML_CALLS", calls_.c_str(), 1);
    use_fixture(fixture("gb10.json"));
  }
  void TearDown() override {
    unsetenv("SPARKDOC_FAKE_NVML_CALLS");
    unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  }
  void use_fixture(const std::string& path) {
    setenv("SPARKDOC_FAKE_GPU_FIXTURE", path.c_str(), 1);
  }
  // gb10.json with `errors` injected on its device.
  void use_gb10_with_errors(const nlohmann::json& errors) {
    std::ifstream in(fixture("gb10.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["nvml"]["devices"][0]["errors"] = errors;
    tree_.write("gb10-errors.json", j.dump());
    use_fixture(tree_.path() + "/gb10-errors.json");
  }
  std::vector<std::string> calls() const {
    std::ifstream in(calls_);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  Nvml nvml() const {
    auto loaded = Nvml::load(SPARKDOC_FAKE_NVML);
    EXPECT_TRUE(loaded) << loaded.error().message;
    return *loaded;
  }

  sys::testing::TempTree tree_;
  std::string calls_;
};

TEST_F(FakeNvml, ListsTheGpusByUuidWithTheirHighestClock) {
  auto gpus = list_lockable_gpus(nvml());
  ASSERT_TRUE(gpus) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].uuid, kGb10Uuid);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA GB10");
  EXPECT_EQ((*gpus)[0].max_sm_clock_mhz.value_or(0), 3003u);
  EXPECT_THAT(calls(), IsEmpty());
}

TEST_F(FakeNvml, LocksAndResetsTheGpuWithThatUuid) {
  ASSERT_TRUE(lock_gpu_clocks(nvml(), kGb10Uuid, 300, 2200));
  ASSERT_TRUE(reset_gpu_clocks(nvml(), kGb10Uuid));
  EXPECT_THAT(
      calls(),
      ElementsAre(std::string("nvmlDeviceSetGpuLockedClocks ") + kGb10Uuid + " 300 2200 SUCCESS",
                  std::string("nvmlDeviceResetGpuLockedClocks ") + kGb10Uuid + " SUCCESS"));
}

TEST_F(FakeNvml, AnotherUuidTouchesNothing) {
  auto reset = reset_gpu_clocks(nvml(), "GPU-00000000-gone");
  ASSERT_FALSE(reset);
  EXPECT_EQ(reset.error().why, Why::kAbsent);
  EXPECT_THAT(reset.error().message, HasSubstr("no GPU with UUID GPU-00000000-gone among the 1"));
  EXPECT_THAT(calls(), IsEmpty());
}

TEST_F(FakeNvml, NoPermissionSaysSudo) {
  use_gb10_with_errors({{"nvmlDeviceSetGpuLockedClocks", "NO_PERMISSION"}});
  auto locked = lock_gpu_clocks(nvml(), kGb10Uuid, 300, 2200);
  ASSERT_FALSE(locked);
  EXPECT_EQ(locked.error().why, Why::kNoPermission);
  EXPECT_THAT(locked.error().message,
              HasSubstr("nvmlDeviceSetGpuLockedClocks returned NVML_ERROR_NO_PERMISSION (4): "
                        "Insufficient Permissions: locking or resetting GPU clocks needs root; "
                        "run it with sudo"));
  EXPECT_THAT(calls(), ElementsAre(std::string("nvmlDeviceSetGpuLockedClocks ") + kGb10Uuid +
                                   " 300 2200 NO_PERMISSION"));
}

TEST_F(FakeNvml, NotSupportedAndInvalidRangesSayWhatIsLeft) {
  use_gb10_with_errors({{"nvmlDeviceSetGpuLockedClocks", "NOT_SUPPORTED"},
                        {"nvmlDeviceResetGpuLockedClocks", "INVALID_ARGUMENT"}});
  auto locked = lock_gpu_clocks(nvml(), kGb10Uuid, 300, 2200);
  ASSERT_FALSE(locked);
  EXPECT_EQ(locked.error().why, Why::kNotSupported);
  EXPECT_THAT(locked.error().message, HasSubstr("does not lock clocks"));
  auto reset = reset_gpu_clocks(nvml(), kGb10Uuid);
  ASSERT_FALSE(reset);
  EXPECT_THAT(reset.error().message, HasSubstr("nvidia-smi -q -d SUPPORTED_CLOCKS"));
}

// An NVML without the two entry points (the legacy fake) is a refusal before any call.
TEST_F(FakeNvml, AnNvmlWithoutTheLockIsARefusalNotACrash) {
  auto legacy = Nvml::load(SPARKDOC_FAKE_NVML_LEGACY);
  ASSERT_TRUE(legacy) << legacy.error().message;
  EXPECT_FALSE(legacy->api().device_set_gpu_locked_clocks);
  auto gpus = list_lockable_gpus(*legacy);
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().why, Why::kNotSupported);
  EXPECT_THAT(gpus.error().message, HasSubstr("symbol nvmlDeviceSetGpuLockedClocks missing from "));
  EXPECT_THAT(gpus.error().message, HasSubstr("this NVML cannot lock GPU clocks"));
  EXPECT_FALSE(lock_gpu_clocks(*legacy, kGb10Uuid, 300, 2200));
  EXPECT_FALSE(reset_gpu_clocks(*legacy, kGb10Uuid));
}

TEST_F(FakeNvml, NoDriverIsAnErrorOfItsOwn) {
  use_fixture(fixture("driver_not_loaded.json"));
  auto gpus = list_lockable_gpus(nvml());
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::gpu
