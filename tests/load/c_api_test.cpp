// libsparkdoc.so through its C header, against the fake libcuda (SPARKDOC_CUDA_LIBRARY): the
// checkpoint is enumerated as Python sees it, a load fills caller-provided device pointers,
// failures map to status codes with a thread-local message, and 100 failing loads leak nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_files.h"
#include "gpu/cuda_types.h"
#include "sparkdoc/sparkdoc.h"

namespace sparkdoc::load {
namespace {

namespace fs = std::filesystem;
using gpu::cuda::CUcontext;
using gpu::cuda::CUdevice;
using gpu::cuda::CUdeviceptr;
using gpu::cuda::CUresult;
using testing::make_tensor;
using testing::TensorData;

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::test_folder("sparkdoc-abi",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "fixture.json") << testing::fake_fixture(64ull << 20);
    ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", (dir_ / "fixture.json").c_str(), 1);
    ::setenv("SPARKDOC_CUDA_LIBRARY", SPARKDOC_FAKE_CUDA, 1);
    tensors_ = {make_tensor("a.weight", "BF16", {17, 33}, 11),
                make_tensor("b.bias", "F32", {5}, 12), make_tensor("empty", "I64", {0}, 13),
                make_tensor("c", "F8_E4M3", {999}, 14)};
    testing::write_safetensors(dir_ / "model.safetensors", tensors_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::vector<TensorData> tensors_;
  testing::FakeCudaHooks hooks_;
};

// A device allocation made through the fake directly (the caller's "torch.empty").
struct FakeDeviceMemory {
  explicit FakeDeviceMemory(size_t bytes) {
    void* handle = ::dlopen(SPARKDOC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    // The fake's own signatures: a call through another function type is undefined (clang's
    // -fsanitize=function stops on it).
    using Retain = CUresult (*)(CUcontext*, CUdevice);
    using Set = CUresult (*)(CUcontext);
    using Alloc = CUresult (*)(CUdeviceptr*, size_t);
    auto retain = reinterpret_cast<Retain>(::dlsym(handle, "cuDevicePrimaryCtxRetain"));
    auto set = reinterpret_cast<Set>(::dlsym(handle, "cuCtxSetCurrent"));
    auto alloc = reinterpret_cast<Alloc>(::dlsym(handle, "cuMemAlloc_v2"));
    free_ = reinterpret_cast<CUresult (*)(CUdeviceptr)>(::dlsym(handle, "cuMemFree_v2"));
    release_ =
        reinterpret_cast<CUresult (*)(CUdevice)>(::dlsym(handle, "cuDevicePrimaryCtxRelease_v2"));
    reinterpret_cast<CUresult (*)(unsigned)>(::dlsym(handle, "cuInit"))(0);
    CUcontext context = nullptr;
    retain(&context, 0);
    set(context);
    alloc(&address, bytes);
    ::dlclose(handle);
  }
  ~FakeDeviceMemory() {
    free_(address);
    release_(0);
  }
  CUdeviceptr address = 0;
  CUresult (*free_)(CUdeviceptr) = nullptr;
  CUresult (*release_)(CUdevice) = nullptr;
};

TEST_F(CApiTest, EnumeratesTheCheckpointAndLoadsIntoCallerPointers) {
  sparkdoc_checkpoint* ck = nullptr;
  ASSERT_EQ(sparkdoc_checkpoint_open(dir_.c_str(), &ck), SPARKDOC_OK) << sparkdoc_last_error();
  EXPECT_STREQ(sparkdoc_last_error(), "");
  size_t files = 0;
  size_t count = 0;
  ASSERT_EQ(sparkdoc_checkpoint_file_count(ck, &files), SPARKDOC_OK);
  ASSERT_EQ(sparkdoc_checkpoint_tensor_count(ck, &count), SPARKDOC_OK);
  EXPECT_EQ(files, 1u);
  ASSERT_EQ(count, tensors_.size());
  const char* path = nullptr;
  ASSERT_EQ(sparkdoc_checkpoint_file(ck, 0, &path), SPARKDOC_OK);
  EXPECT_EQ(fs::path(path).filename(), "model.safetensors");

  {
    FakeDeviceMemory memory(1 << 20);
    std::vector<uint64_t> pointers;
    uint64_t at = memory.address;
    for (size_t i = 0; i < count; ++i) {
      sparkdoc_tensor_info info{};
      ASSERT_EQ(sparkdoc_checkpoint_tensor(ck, i, &info), SPARKDOC_OK);
      const TensorData& want = tensors_[i];  // written in offset order, so the same order
      EXPECT_STREQ(info.name, want.name.c_str());
      EXPECT_STREQ(info.dtype, want.dtype.c_str());
      EXPECT_EQ(std::vector<uint64_t>(info.shape, info.shape + info.rank), want.shape);
      EXPECT_EQ(info.nbytes, want.bytes.size());
      pointers.push_back(info.nbytes == 0 ? 0 : at);
      at += (info.nbytes + 255) / 256 * 256;
    }
    size_t found = 99;
    ASSERT_EQ(sparkdoc_checkpoint_find(ck, "b.bias", &found), SPARKDOC_OK);
    EXPECT_EQ(found, 1u);
    EXPECT_EQ(sparkdoc_checkpoint_find(ck, "nope", &found), SPARKDOC_NOT_FOUND);

    sparkdoc_loader_options options{};
    options.struct_size = sizeof options;
    options.reader_threads = 3;
    options.chunk_bytes = 4096;
    sparkdoc_loader* loader = nullptr;
    ASSERT_EQ(sparkdoc_loader_create(0, &options, &loader), SPARKDOC_OK) << sparkdoc_last_error();
    sparkdoc_load_stats stats{};
    stats.struct_size = sizeof stats;
    ASSERT_EQ(sparkdoc_load(loader, ck, count, nullptr, pointers.data(), &stats), SPARKDOC_OK)
        << sparkdoc_last_error();
    for (size_t i = 0; i < count; ++i) {
      if (pointers[i] == 0) continue;
      EXPECT_EQ(hooks_.device_bytes(pointers[i], tensors_[i].bytes.size()), tensors_[i].bytes)
          << tensors_[i].name;
    }
    uint64_t total = 0;
    for (const auto& t : tensors_) total += t.bytes.size();
    EXPECT_EQ(stats.bytes, total);
    EXPECT_GE(stats.bytes_read, total);
    EXPECT_EQ(stats.files_direct + stats.files_buffered, 1u);
    EXPECT_GT(stats.peak_rss_bytes, 0u);
    EXPECT_GT(stats.seconds, 0.0);

    // A subset, by index.
    std::vector<size_t> which = {3};
    std::vector<uint64_t> to = {memory.address + (512 << 10)};
    ASSERT_EQ(sparkdoc_load(loader, ck, 1, which.data(), to.data(), nullptr), SPARKDOC_OK);
    EXPECT_EQ(hooks_.device_bytes(to[0], tensors_[3].bytes.size()), tensors_[3].bytes);
    sparkdoc_loader_destroy(loader);
  }
  sparkdoc_checkpoint_close(ck);
  EXPECT_TRUE(hooks_.all_released());
}

TEST_F(CApiTest, ATruncatedShardIsABadCheckpointNamingTheFile) {
  fs::resize_file(dir_ / "model.safetensors", fs::file_size(dir_ / "model.safetensors") - 7);
  sparkdoc_checkpoint* ck = nullptr;
  EXPECT_EQ(sparkdoc_checkpoint_open((dir_ / "model.safetensors").c_str(), &ck),
            SPARKDOC_BAD_CHECKPOINT);
  EXPECT_EQ(ck, nullptr);
  EXPECT_NE(std::string(sparkdoc_last_error()).find("model.safetensors"), std::string::npos)
      << sparkdoc_last_error();
}

TEST_F(CApiTest, TheLastErrorBelongsToTheThreadThatFailed) {
  sparkdoc_checkpoint* ck = nullptr;
  EXPECT_EQ(sparkdoc_checkpoint_open("/nonexistent/x.safetensors", &ck), SPARKDOC_NOT_FOUND);
  std::string other;
  std::thread([&] { other = sparkdoc_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(sparkdoc_last_error()), "");
}

TEST_F(CApiTest, BadArgumentsAreRefusedWithoutTouchingTheGpu) {
  sparkdoc_checkpoint* ck = nullptr;
  ASSERT_EQ(sparkdoc_checkpoint_open(dir_.c_str(), &ck), SPARKDOC_OK);
  sparkdoc_loader* loader = nullptr;
  EXPECT_EQ(sparkdoc_loader_create(-1, nullptr, &loader), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_EQ(sparkdoc_loader_create(7, nullptr, &loader), SPARKDOC_NO_CUDA);
  EXPECT_NE(std::string(sparkdoc_last_error()).find("GPU 7"), std::string::npos);
  ASSERT_EQ(sparkdoc_loader_create(0, nullptr, &loader), SPARKDOC_OK) << sparkdoc_last_error();
  uint64_t pointer = 0x1000;
  size_t index = 42;
  EXPECT_EQ(sparkdoc_load(loader, ck, 1, &index, &pointer, nullptr), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_EQ(sparkdoc_load(loader, ck, 1, nullptr, &pointer, nullptr), SPARKDOC_INVALID_ARGUMENT);
  index = 0;
  pointer = 0;  // a tensor with bytes and no destination
  EXPECT_EQ(sparkdoc_load(loader, ck, 1, &index, &pointer, nullptr), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sparkdoc_last_error()).find("tensor 'a.weight'"), std::string::npos);
  sparkdoc_loader_destroy(loader);
  sparkdoc_checkpoint_close(ck);
  EXPECT_TRUE(hooks_.all_released());
}

// Issue 21 item 10: staging options past what a loader pins are refused, before the GPU; a
// chunk of 2^64-1 bytes no longer wraps to 0 when rounded to 4096.
TEST_F(CApiTest, StagingOptionsOutOfRangeAreRefused) {
  auto create = [](uint32_t readers, uint32_t slots, uint64_t chunk) {
    sparkdoc_loader_options o{};
    o.struct_size = sizeof o;
    o.reader_threads = readers;
    o.slots_per_reader = slots;
    o.chunk_bytes = chunk;
    sparkdoc_loader* loader = nullptr;
    int status = sparkdoc_loader_create(0, &o, &loader);
    sparkdoc_loader_destroy(loader);
    return status;
  };
  EXPECT_EQ(create(2000, 0, 0), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sparkdoc_last_error()).find("2000 readers (at most 256)"),
            std::string::npos)
      << sparkdoc_last_error();
  EXPECT_EQ(create(0, UINT32_MAX, 0), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_EQ(create(0, 0, UINT64_MAX), SPARKDOC_INVALID_ARGUMENT);
  EXPECT_EQ(create(256, 64, 1ull << 30), SPARKDOC_INVALID_ARGUMENT);  // 16 TiB of staging
  EXPECT_NE(std::string(sparkdoc_last_error()).find("more than the 8.0 GiB"), std::string::npos)
      << sparkdoc_last_error();
  EXPECT_EQ(create(4, 2, 1 << 20), SPARKDOC_OK) << sparkdoc_last_error();
  EXPECT_TRUE(hooks_.all_released());
}

// Issue 6: "100 failing loads in a loop leak nothing", through the ABI Python uses.
TEST_F(CApiTest, AHundredFailingLoadsLeakNothing) {
  const size_t fds_before = testing::open_fd_count();
  for (int i = 0; i < 100; ++i) {
    sparkdoc_checkpoint* ck = nullptr;
    ASSERT_EQ(sparkdoc_checkpoint_open(dir_.c_str(), &ck), SPARKDOC_OK);
    sparkdoc_loader* loader = nullptr;
    ASSERT_EQ(sparkdoc_loader_create(0, nullptr, &loader), SPARKDOC_OK);
    {
      FakeDeviceMemory memory(1000);  // too small: the first tensor alone needs 1122 bytes
      std::vector<uint64_t> pointers(4, memory.address);
      pointers[2] = 0;
      EXPECT_EQ(sparkdoc_load(loader, ck, 4, nullptr, pointers.data(), nullptr),
                SPARKDOC_CUDA_ERROR);
    }
    sparkdoc_loader_destroy(loader);
    sparkdoc_checkpoint_close(ck);
  }
  EXPECT_TRUE(hooks_.all_released());
  EXPECT_EQ(testing::open_fd_count(), fds_before);
}

}  // namespace
}  // namespace sparkdoc::load
