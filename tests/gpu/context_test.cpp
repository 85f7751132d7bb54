// The fresh CUDA context of `sparkdoc clean`, against the in-tree fake libcuda: what it reports,
// and that the primary context is released on every path.
#include "gpu/context.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sparkdoc::gpu {
namespace {

std::string gpu_fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/gpu/" + name;
}

// The fake's reference count of device 0's primary context.
int primary_retained() {
  void* handle = ::dlopen(SPARKDOC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return -100;
  using Fn = int (*)(int);
  auto fn = reinterpret_cast<Fn>(::dlsym(handle, "sparkdoc_fake_cuda_primary_retained"));
  int count = fn == nullptr ? -200 : fn(0);
  ::dlclose(handle);
  return count;
}

// A fixture written for one test: the GB10 fixture's "cuda" half with changes.
class TempFixture {
 public:
  explicit TempFixture(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("sparkdoc-context-" + std::to_string(::getpid()) + ".json"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFixture() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(FreshContext, ReportsTheDriversFreeAndTotalAndReleasesTheContext) {
  ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", gpu_fixture("gb10.json").c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda) << cuda.error().message;
  EXPECT_TRUE(cuda->api().mem_get_info);
  EXPECT_EQ(cuda->api().device_primary_ctx_release.name(), "cuDevicePrimaryCtxRelease_v2");
  auto m = fresh_context_mem_info(*cuda, 0);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->ordinal, 0);
  EXPECT_EQ(m->total_bytes, 130663165952u);
  EXPECT_EQ(m->free_bytes, 130663165952u);  // the fixture names no free figure
  EXPECT_GE(m->elapsed_ms, 0.0);
  EXPECT_EQ(primary_retained(), 0);
}

TEST(FreshContext, FreeFigureFromTheFixture) {
  TempFixture f(R"({"cuda": {"driver_version": 13000, "devices": [
      {"name": "NVIDIA GB10", "total_memory_bytes": 130663165952,
       "free_memory_bytes": 98000000000}]}})");
  ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", f.path().c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda);
  auto m = fresh_context_mem_info(*cuda, 0);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->free_bytes, 98000000000u);
}

TEST(FreshContext, AFailingMemGetInfoStillReleasesTheContext) {
  TempFixture f(R"({"cuda": {"driver_version": 13000,
      "errors": {"cuMemGetInfo_v2": "UNKNOWN"},
      "devices": [{"name": "NVIDIA GB10", "total_memory_bytes": 1}]}})");
  ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", f.path().c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda);
  auto m = fresh_context_mem_info(*cuda, 0);
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message, ::testing::HasSubstr("cuMemGetInfo_v2"));
  EXPECT_THAT(m.error().message, ::testing::HasSubstr("CUDA_ERROR_UNKNOWN"));
  EXPECT_EQ(primary_retained(), 0);
}

TEST(FreshContext, NoDeviceNamesTheFailingCall) {
  ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", gpu_fixture("no_device.json").c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda);
  auto m = fresh_context_mem_info(*cuda, 0);
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message, ::testing::HasSubstr("cuInit"));
  EXPECT_EQ(m.error().why, Why::kAbsent);
  EXPECT_EQ(primary_retained(), 0);
}

TEST(FreshContext, AnOrdinalWithoutADeviceFailsBeforeAnyContext) {
  ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", gpu_fixture("gb10.json").c_str(), 1);
  auto cuda = Cuda::load(SPARKDOC_FAKE_CUDA);
  ASSERT_TRUE(cuda);
  auto m = fresh_context_mem_info(*cuda, 3);
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message, ::testing::HasSubstr("cuDeviceGet"));
  EXPECT_EQ(primary_retained(), 0);
}

}  // namespace
}  // namespace sparkdoc::gpu
