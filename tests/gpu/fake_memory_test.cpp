// The fake libcuda's memory, copy, stream and event entry points, which the bandwidth meter and
// the checkpoint loader are tested against: round trips keep bytes, a full device answers
// CUDA_ERROR_OUT_OF_MEMORY, and the live counts return to zero.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu/cuda_api.h"

namespace sparkdoc::gpu {
namespace {

using cuda::CUDA_SUCCESS;

long live(const char* kind) {
  void* handle = ::dlopen(SPARKDOC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return -100;
  using Fn = long (*)(const char*);
  auto fn = reinterpret_cast<Fn>(::dlsym(handle, "sparkdoc_fake_cuda_live"));
  long n = fn == nullptr ? -200 : fn(kind);
  ::dlclose(handle);
  return n;
}

class FakeMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("sparkdoc-fake-memory-" + std::to_string(::getpid()) + ".json"))
                .string();
    std::ofstream(path_) << R"({"cuda": {"driver_version": 13000, "devices": [
        {"name": "NVIDIA GB10", "total_memory_bytes": 1048576, "free_memory_bytes": 65536}]}})";
    ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", path_.c_str(), 1);
    auto loaded = Cuda::load(SPARKDOC_FAKE_CUDA);
    ASSERT_TRUE(loaded) << loaded.error().message;
    cuda_ = *loaded;
    const auto& api = cuda_.api();
    ASSERT_EQ(api.init(0), CUDA_SUCCESS);
    ASSERT_EQ(api.device_primary_ctx_retain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(api.ctx_set_current(context_), CUDA_SUCCESS);
  }
  void TearDown() override {
    cuda_.api().ctx_set_current(nullptr);
    cuda_.api().device_primary_ctx_release(0);
    std::filesystem::remove(path_);
  }

  std::string path_;
  Cuda cuda_;
  cuda::CUcontext context_ = nullptr;
};

TEST_F(FakeMemory, CopiesRoundTripThroughDeviceMemory) {
  const auto& api = cuda_.api();
  cuda::CUdeviceptr a = 0;
  cuda::CUdeviceptr b = 0;
  ASSERT_EQ(api.mem_alloc(&a, 4096), CUDA_SUCCESS);
  ASSERT_EQ(api.mem_alloc(&b, 4096), CUDA_SUCCESS);
  void* pinned = nullptr;
  ASSERT_EQ(api.mem_host_alloc(&pinned, 4096, cuda::CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  std::vector<unsigned char> in(4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
  std::memcpy(pinned, in.data(), in.size());
  cuda::CUstream stream = nullptr;
  cuda::CUevent start = nullptr;
  cuda::CUevent end = nullptr;
  ASSERT_EQ(api.stream_create(&stream, cuda::CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(api.event_create(&start, cuda::CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(api.event_create(&end, cuda::CU_EVENT_DEFAULT), CUDA_SUCCESS);
  EXPECT_EQ(api.event_record(start, stream), CUDA_SUCCESS);
  EXPECT_EQ(api.memcpy_htod_async(a, pinned, 4096, stream), CUDA_SUCCESS);
  EXPECT_EQ(api.memcpy_dtod_async(b, a, 4096, stream), CUDA_SUCCESS);
  EXPECT_EQ(api.event_record(end, stream), CUDA_SUCCESS);
  EXPECT_EQ(api.stream_synchronize(stream), CUDA_SUCCESS);
  float ms = -1;
  EXPECT_EQ(api.event_elapsed_time(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  std::vector<unsigned char> out(4096);
  EXPECT_EQ(api.memcpy_dtoh(out.data(), b, 4096), CUDA_SUCCESS);
  EXPECT_EQ(out, in);
  // Out of bounds and unknown pointers are refused, as the driver does.
  EXPECT_NE(api.memcpy_dtoh(out.data(), b + 1, 4096), CUDA_SUCCESS);
  EXPECT_NE(api.memcpy_htod(0xdead0000, in.data(), 16), CUDA_SUCCESS);
  EXPECT_EQ(live("device"), 2);
  EXPECT_EQ(live("host"), 1);
  EXPECT_EQ(api.event_destroy(start), CUDA_SUCCESS);
  EXPECT_EQ(api.event_destroy(end), CUDA_SUCCESS);
  EXPECT_EQ(api.stream_destroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_free_host(pinned), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_free(a), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_free(b), CUDA_SUCCESS);
  for (const char* kind : {"device", "host", "registered", "streams", "events"}) {
    EXPECT_EQ(live(kind), 0) << kind;
  }
}

TEST_F(FakeMemory, AFullDeviceAnswersOutOfMemory) {
  const auto& api = cuda_.api();
  cuda::CUdeviceptr a = 0;
  cuda::CUdeviceptr b = 0;
  ASSERT_EQ(api.mem_alloc(&a, 60000), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_alloc(&b, 8192), cuda::CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(api.mem_free(a), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_alloc(&b, 8192), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_free(b), CUDA_SUCCESS);
  EXPECT_EQ(live("device"), 0);
}

TEST_F(FakeMemory, HostRegistrationIsCountedOnce) {
  const auto& api = cuda_.api();
  std::vector<unsigned char> buffer(8192);
  EXPECT_EQ(api.mem_host_register(buffer.data(), buffer.size(), 0), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_host_register(buffer.data(), buffer.size(), 0),
            cuda::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(api.mem_host_unregister(buffer.data()), CUDA_SUCCESS);
  EXPECT_EQ(api.mem_host_unregister(buffer.data()), cuda::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

}  // namespace
}  // namespace sparkdoc::gpu
