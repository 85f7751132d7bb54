// The device measurement against the fake libcuda (host memory, memcpy copies, host-time
// events): the flow, what each run counts, and that every path, the failing ones included,
// releases every buffer, stream, event and the context.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bw/device.h"
#include "bw/stats.h"
#include "gpu/cuda_api.h"

namespace sparkdoc::bw {
namespace {

using ::testing::HasSubstr;

// The fake's test hooks, found in the same mapping of the library that Cuda::load opened.
template <class Fn>
Fn hook(const char* name) {
  void* handle = ::dlopen(SPARKDOC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  auto fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  ::dlclose(handle);
  return fn;
}

long live(const char* kind) {
  auto fn = hook<long (*)(const char*)>("sparkdoc_fake_cuda_live");
  return fn == nullptr ? -100 : fn(kind);
}

int primary_retained(int device) {
  auto fn = hook<int (*)(int)>("sparkdoc_fake_cuda_primary_retained");
  return fn == nullptr ? -100 : fn(device);
}

class FakeDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("sparkdoc-bw-device-" + std::to_string(::getpid()) + ".json"))
                .string();
    use_fixture(R"({"name": "NVIDIA H200", "total_memory_bytes": 150109880320,
                    "free_memory_bytes": 67108864})");
    auto loaded = gpu::Cuda::load(SPARKDOC_FAKE_CUDA);
    ASSERT_TRUE(loaded) << loaded.error().message;
    cuda_ = *loaded;
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // The fixture's one device, and the driver-wide part around it.
  void use_fixture(const std::string& device, const std::string& cuda_extra = "") {
    std::ofstream(path_) << R"({"cuda": {"driver_version": 13000, )" << cuda_extra
                         << R"("devices": [)" << device << "]}}";
    ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", path_.c_str(), 1);
  }

  static DeviceOptions small(uint64_t bytes = kMiB) {
    DeviceOptions o;
    o.buffer_bytes = bytes;
    o.runs = 3;
    o.warmup_runs = 1;
    return o;
  }

  void expect_nothing_held() {
    for (const char* kind : {"device", "host", "registered", "streams", "events"}) {
      EXPECT_EQ(live(kind), 0) << kind;
    }
    EXPECT_EQ(primary_retained(0), 0);
    gpu::cuda::CUcontext current = reinterpret_cast<gpu::cuda::CUcontext>(0x1);
    ASSERT_EQ(cuda_.api().ctx_get_current(&current), gpu::cuda::CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
  }

  std::string path_;
  gpu::Cuda cuda_;
};

TEST_F(FakeDevice, MeasuresACopyCountingReadAndWriteAndReleasesEverything) {
  auto r = measure_device(cuda_, small());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->name, "NVIDIA H200");
  EXPECT_EQ(r->ordinal, 0);
  EXPECT_EQ(r->buffer_bytes, kMiB);
  EXPECT_EQ(r->free_bytes, 64 * kMiB);
  EXPECT_EQ(r->warmup_runs, 1);
  EXPECT_EQ(r->copy.bytes_per_run, 2 * kMiB);
  EXPECT_EQ(r->copy.runs, 3);
  EXPECT_GT(r->copy.median_gbps, 0);
  EXPECT_GE(r->copy.best_gbps, r->copy.median_gbps);
  ASSERT_TRUE(r->h2d) << r->h2d.reason();
  ASSERT_TRUE(r->d2h) << r->d2h.reason();
  EXPECT_EQ(r->h2d->bytes_per_run, kMiB);
  EXPECT_EQ(r->d2h->bytes_per_run, kMiB);
  EXPECT_EQ(r->h2d->runs, 3);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_THAT(r->notes[0], HasSubstr("L2 cache"));
  expect_nothing_held();
}

TEST_F(FakeDevice, ProgressCountsEveryRunOfEveryPhase) {
  std::vector<std::string> phases;
  std::vector<std::pair<int, int>> last;
  auto r = measure_device(cuda_, small(), [&](std::string_view phase, int done, int total) {
    if (phases.empty() || phases.back() != phase) {
      phases.emplace_back(phase);
      last.emplace_back(0, 0);
    }
    EXPECT_EQ(done, last.back().first + 1);
    last.back() = {done, total};
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(phases, (std::vector<std::string>{"device copy", "pinned H2D", "pinned D2H"}));
  for (auto [done, total] : last) {
    EXPECT_EQ(done, 4);
    EXPECT_EQ(total, 4);
  }
}

TEST_F(FakeDevice, OutOfMemoryIsAClearErrorAndLeaksNothing) {
  // Room for one 2 MiB buffer, not two.
  use_fixture(R"({"name": "NVIDIA H200", "total_memory_bytes": 150109880320,
                  "free_memory_bytes": 3145728})");
  auto r = measure_device(cuda_, small(2 * kMiB));
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("allocating 2.0 MiB of device memory"));
  EXPECT_THAT(r.error().message, HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_THAT(r.error().message, HasSubstr("3.0 MiB free"));
  EXPECT_THAT(r.error().message, HasSubstr("smaller --size"));
  expect_nothing_held();
}

TEST_F(FakeDevice, TheDefaultSizeRefusesADeviceWithoutRoomForAMemoryMeasurement) {
  auto r = measure_device(cuda_, DeviceOptions{});  // 64 MiB free: the cap is 16 MiB
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("64.0 MiB free"));
  expect_nothing_held();
}

// Each call that can fail once the buffers are held: the error names it, and nothing stays.
TEST_F(FakeDevice, AFailingCallReleasesEverything) {
  for (const char* symbol : {"cuMemsetD8_v2", "cuStreamCreate", "cuEventCreate", "cuEventRecord",
                             "cuMemcpyDtoDAsync_v2", "cuEventSynchronize",
                             "cuEventElapsedTime_v2"}) {
    use_fixture(std::string(R"({"name": "NVIDIA H200", "total_memory_bytes": 150109880320,
                  "free_memory_bytes": 67108864, "errors": {")") +
                symbol + R"(": "UNKNOWN"}})");
    auto r = measure_device(cuda_, small());
    ASSERT_FALSE(r) << symbol;
    EXPECT_THAT(r.error().message, HasSubstr(std::string(symbol) + " returned CUDA_ERROR_UNKNOWN"));
    expect_nothing_held();
  }
}

TEST_F(FakeDevice, NoPinnedMemoryKeepsTheCopyAndSaysWhy) {
  use_fixture(R"({"name": "NVIDIA H200", "total_memory_bytes": 150109880320,
                  "free_memory_bytes": 67108864, "errors": {"cuMemHostAlloc": "OUT_OF_MEMORY"}})");
  auto r = measure_device(cuda_, small());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GT(r->copy.median_gbps, 0);
  ASSERT_FALSE(r->h2d);
  EXPECT_THAT(r->h2d.reason(), HasSubstr("no pinned host buffer of 1.0 MiB"));
  EXPECT_THAT(r->d2h.reason(), HasSubstr("cuMemHostAlloc"));
  expect_nothing_held();
}

TEST_F(FakeDevice, TransfersCanBeLeftOut) {
  DeviceOptions o = small();
  o.transfers = false;
  auto r = measure_device(cuda_, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->h2d.reason(), HasSubstr("--no-transfers"));
  EXPECT_THAT(r->d2h.reason(), HasSubstr("--no-transfers"));
  expect_nothing_held();
}

TEST_F(FakeDevice, NoDeviceIsAbsent) {
  use_fixture(R"({"name": "NVIDIA H200"})", R"("init": "NO_DEVICE", )");
  auto r = measure_device(cuda_, small());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().why, Why::kAbsent);
  EXPECT_THAT(r.error().message, HasSubstr("CUDA_ERROR_NO_DEVICE"));
}

TEST_F(FakeDevice, ADeviceNumberPastTheLastIsAbsent) {
  DeviceOptions o = small();
  o.ordinal = 3;
  auto r = measure_device(cuda_, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().why, Why::kAbsent);
  EXPECT_THAT(r.error().message, HasSubstr("device 3 does not exist"));
  EXPECT_THAT(r.error().message, HasSubstr("sees 1 device(s)"));
  expect_nothing_held();
}

TEST_F(FakeDevice, NoTimedRunIsRefusedBeforeTouchingTheDriver) {
  DeviceOptions o = small();
  o.runs = 0;
  EXPECT_FALSE(measure_device(cuda_, o));
}

// A caller (the Python loader, some day) may have its own context current: it is current
// again afterwards.
TEST_F(FakeDevice, AContextCurrentBeforeIsCurrentAfter) {
  const auto& api = cuda_.api();
  ASSERT_EQ(api.init(0), gpu::cuda::CUDA_SUCCESS);
  gpu::cuda::CUcontext mine = nullptr;
  ASSERT_EQ(api.device_primary_ctx_retain(&mine, 0), gpu::cuda::CUDA_SUCCESS);
  ASSERT_EQ(api.ctx_set_current(mine), gpu::cuda::CUDA_SUCCESS);
  auto r = measure_device(cuda_, small());
  ASSERT_TRUE(r) << r.error().message;
  gpu::cuda::CUcontext current = nullptr;
  ASSERT_EQ(api.ctx_get_current(&current), gpu::cuda::CUDA_SUCCESS);
  EXPECT_EQ(current, mine);
  EXPECT_EQ(primary_retained(0), 1);
  api.ctx_set_current(nullptr);
  api.device_primary_ctx_release(0);
  expect_nothing_held();
}

}  // namespace
}  // namespace sparkdoc::bw
