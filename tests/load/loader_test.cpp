// The streaming engine against the fake libcuda (device memory is host memory there): bytes
// arrive intact through buffered and direct reads, with one reader or several and slots
// reused many times; failures name the file and tensor and release everything.
#include "load/loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checkpoint_files.h"
#include "load/checkpoint_plan.h"

namespace sparkdoc::load {
namespace {

namespace fs = std::filesystem;
using testing::FakeCudaHooks;
using testing::make_tensor;
using testing::TensorData;

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::test_folder("sparkdoc-load",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    use_fixture(testing::fake_fixture(64ull << 20));
    auto loaded = gpu::Cuda::load(SPARKDOC_FAKE_CUDA);
    ASSERT_TRUE(loaded) << loaded.error().message;
    cuda_ = *loaded;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void use_fixture(const std::string& json) {
    fixture_ = dir_ / "fixture.json";
    std::ofstream(fixture_) << json;
    ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", fixture_.c_str(), 1);
  }

  std::unique_ptr<Loader> loader(LoaderOptions options = {}) {
    auto made = Loader::create(cuda_, 0, options);
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(*made) : nullptr;
  }

  // A two-shard checkpoint with mixed dtypes, odd sizes, an empty and a 0-rank tensor.
  safetensors::Checkpoint write_checkpoint() {
    shard_a_ = {make_tensor("embed.weight", "BF16", {37, 129}, 1),
                make_tensor("empty", "F32", {0, 4}, 2),
                make_tensor("norm.weight", "F32", {1000}, 3), make_tensor("step", "I64", {}, 4)};
    shard_b_ = {make_tensor("fp8.weight", "F8_E4M3", {333, 77}, 5),
                make_tensor("ids", "I64", {5, 7}, 6), make_tensor("tail", "U8", {1}, 7)};
    testing::write_safetensors(dir_ / "model-00001-of-00002.safetensors", shard_a_);
    testing::write_safetensors(dir_ / "model-00002-of-00002.safetensors", shard_b_);
    nlohmann::json map;
    for (const auto& t : shard_a_) map[t.name] = "model-00001-of-00002.safetensors";
    for (const auto& t : shard_b_) map[t.name] = "model-00002-of-00002.safetensors";
    std::ofstream(dir_ / "model.safetensors.index.json")
        << nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump();
    auto opened = safetensors::open_checkpoint(dir_.string());
    EXPECT_TRUE(opened) << opened.error().message;
    return opened ? *opened : safetensors::Checkpoint{};
  }

  const TensorData& expected(const std::string& name) const {
    for (const auto* shard : {&shard_a_, &shard_b_}) {
      for (const auto& t : *shard) {
        if (t.name == name) return t;
      }
    }
    throw std::runtime_error("no tensor " + name);
  }

  fs::path dir_;
  fs::path fixture_;
  gpu::Cuda cuda_;
  FakeCudaHooks hooks_;
  std::vector<TensorData> shard_a_, shard_b_;
};

// A raw file of random bytes and a plan copying assorted, unaligned ranges of it into one
// device allocation.
struct RawCase {
  std::string bytes;
  CopyPlan plan;
};

RawCase raw_case(const fs::path& path, uint64_t device_base) {
  RawCase c;
  c.bytes = testing::random_bytes(3 * 1024 * 1024 + 123, 42);
  std::ofstream(path, std::ios::binary) << c.bytes;
  c.plan.files = {path.string()};
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1},       {1, 4095},          {4096, 4097},           {8193, 1000000}, {1008193, 12345},
      {1100000, 0}, {1200000, 1900000}, {3 * 1024 * 1024, 123}, {500, 70000},    {3145000, 851}};
  uint64_t at = device_base;
  for (size_t i = 0; i < ranges.size(); ++i) {
    c.plan.copies.push_back(Copy{0, ranges[i].first, ranges[i].second,
                                 ranges[i].second == 0 ? 0 : at,
                                 "tensor 'r" + std::to_string(i) + "'"});
    at += ranges[i].second;
  }
  return c;
}

void expect_raw_case_arrived(const FakeCudaHooks& hooks, const RawCase& c) {
  for (const Copy& copy : c.plan.copies) {
    if (copy.length == 0) continue;
    EXPECT_EQ(hooks.device_bytes(copy.destination, copy.length),
              c.bytes.substr(copy.offset, copy.length))
        << copy.label;
  }
}

TEST_F(LoaderTest, CopiesEveryRangeIntactWithEveryReadModeAndReaderCount) {
  for (DirectIo mode : {DirectIo::kOff, DirectIo::kOn, DirectIo::kAuto}) {
    for (unsigned readers : {1u, 4u}) {
      LoaderOptions options;
      options.readers = readers;
      options.chunk_bytes = 64 * 1024;  // many reads per reader, each slot reused many times
      options.direct_io = mode;
      auto l = loader(options);
      ASSERT_NE(l, nullptr);
      auto memory = DeviceBuffer::allocate(l->session(), 8u << 20);
      ASSERT_TRUE(memory) << memory.error().message;
      RawCase c = raw_case(dir_ / "raw.bin", memory->address());
      std::atomic<uint64_t> progress{0};
      auto stats = l->run(c.plan, &progress);
      ASSERT_TRUE(stats) << stats.error().message;
      expect_raw_case_arrived(hooks_, c);
      EXPECT_EQ(stats->copy_bytes, progress.load());
      EXPECT_EQ(stats->copies, 9u);
      EXPECT_GE(stats->read_bytes, stats->copy_bytes - 70000 - 12345);
      EXPECT_EQ(stats->readers, readers);
      ASSERT_EQ(stats->files.size(), 1u);
      if (mode == DirectIo::kOff) {
        EXPECT_FALSE(stats->files[0].direct) << stats->files[0].mode;
      }
      if (mode == DirectIo::kOn && fs::path(dir_).string().rfind("/dev/shm", 0) != 0) {
        // /tmp on ext4/xfs takes O_DIRECT; the mode text says why if not.
        RecordProperty("direct_mode", stats->files[0].mode);
      }
    }
  }
  EXPECT_TRUE(hooks_.all_released());
}

TEST_F(LoaderTest, LoadsAMultiShardCheckpointIntoMemoryItAllocates) {
  auto checkpoint = write_checkpoint();
  ASSERT_EQ(checkpoint.tensors.size(), 7u);
  {
    LoaderOptions options;
    options.chunk_bytes = 8192;
    auto l = loader(options);
    ASSERT_NE(l, nullptr);
    auto memory = CheckpointMemory::allocate(l->session(), checkpoint);
    ASSERT_TRUE(memory) << memory.error().message;
    auto plan = plan_checkpoint(checkpoint, *memory);
    ASSERT_TRUE(plan) << plan.error().message;
    auto stats = l->run(*plan);
    ASSERT_TRUE(stats) << stats.error().message;
    for (uint32_t i = 0; i < checkpoint.tensors.size(); ++i) {
      const auto& t = checkpoint.tensors[i];
      const auto& want = expected(t.name);
      ASSERT_EQ(t.bytes, want.bytes.size()) << t.name;
      if (t.bytes == 0) {
        EXPECT_EQ(memory->address(i), 0u);
        continue;
      }
      EXPECT_EQ(hooks_.device_bytes(memory->address(i), t.bytes), want.bytes) << t.name;
    }
  }
  EXPECT_TRUE(hooks_.all_released());
}

TEST_F(LoaderTest, LoadsASubsetToCallerPointers) {
  auto checkpoint = write_checkpoint();
  auto l = loader();
  ASSERT_NE(l, nullptr);
  auto memory = DeviceBuffer::allocate(l->session(), 1 << 20);
  ASSERT_TRUE(memory);
  const auto* ids = checkpoint.find("ids");
  const auto* norm = checkpoint.find("norm.weight");
  ASSERT_TRUE(ids && norm);
  std::vector<uint32_t> which = {static_cast<uint32_t>(ids - checkpoint.tensors.data()),
                                 static_cast<uint32_t>(norm - checkpoint.tensors.data())};
  std::vector<uint64_t> to = {memory->address() + 4096, memory->address() + 8192};
  auto plan = plan_tensors(checkpoint, which, to);
  ASSERT_TRUE(plan);
  auto stats = l->run(*plan);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(hooks_.device_bytes(to[0], ids->bytes), expected("ids").bytes);
  EXPECT_EQ(hooks_.device_bytes(to[1], norm->bytes), expected("norm.weight").bytes);
  EXPECT_EQ(stats->copy_bytes, ids->bytes + norm->bytes);
}

TEST_F(LoaderTest, AFileShorterThanThePlanIsAnErrorNamingFileAndTensor) {
  auto l = loader();
  ASSERT_NE(l, nullptr);
  auto memory = DeviceBuffer::allocate(l->session(), 8u << 20);
  ASSERT_TRUE(memory);
  RawCase c = raw_case(dir_ / "raw.bin", memory->address());
  fs::resize_file(dir_ / "raw.bin", 2'000'000);
  auto stats = l->run(c.plan);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().fault, Fault::kIo);
  EXPECT_NE(stats.error().message.find("tensor 'r6' in " + (dir_ / "raw.bin").string()),
            std::string::npos)
      << stats.error().message;
  EXPECT_NE(stats.error().message.find("truncated"), std::string::npos);
}

TEST_F(LoaderTest, AMissingFileIsNotFound) {
  auto l = loader();
  ASSERT_NE(l, nullptr);
  CopyPlan plan;
  plan.files = {(dir_ / "absent.safetensors").string()};
  plan.copies = {Copy{0, 0, 10, 0x1000, "tensor 'x'"}};
  auto stats = l->run(plan);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().fault, Fault::kNotFound);
  EXPECT_NE(stats.error().message.find("absent.safetensors"), std::string::npos);
}

TEST_F(LoaderTest, ADestinationOutsideDeviceMemoryIsACudaErrorNamingTheTensor) {
  auto l = loader();
  ASSERT_NE(l, nullptr);
  auto memory = DeviceBuffer::allocate(l->session(), 1 << 20);  // too small for the case
  ASSERT_TRUE(memory);
  RawCase c = raw_case(dir_ / "raw.bin", memory->address());
  auto stats = l->run(c.plan);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().fault, Fault::kCuda);
  EXPECT_NE(stats.error().message.find("cuMemcpyHtoDAsync_v2 returned CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << stats.error().message;
  EXPECT_NE(stats.error().message.find("tensor 'r"), std::string::npos);
  // The loader is still usable after a failed run.
  auto big = DeviceBuffer::allocate(l->session(), 8u << 20);
  ASSERT_TRUE(big);
  RawCase again = raw_case(dir_ / "raw.bin", big->address());
  auto ok = l->run(again.plan);
  ASSERT_TRUE(ok) << ok.error().message;
  expect_raw_case_arrived(hooks_, again);
}

TEST_F(LoaderTest, OutOfDeviceMemoryMidAllocationFreesWhatWasAllocated) {
  auto checkpoint = write_checkpoint();
  // Room for the first shard (about 10 KB) but not for both (the second is about 26 KB).
  use_fixture(testing::fake_fixture(20000));
  LoaderOptions options;
  options.readers = 1;
  auto l = loader(options);
  ASSERT_NE(l, nullptr);
  auto memory = CheckpointMemory::allocate(l->session(), checkpoint);
  ASSERT_FALSE(memory);
  EXPECT_EQ(memory.error().fault, Fault::kOutOfMemory);
  EXPECT_NE(memory.error().message.find("model-00002-of-00002.safetensors"), std::string::npos)
      << memory.error().message;
  EXPECT_EQ(hooks_.live("device"), 0);
}

TEST_F(LoaderTest, ACopyThatFailsMidLoadStopsTheLoadAndNamesTheTensor) {
  auto checkpoint = write_checkpoint();
  use_fixture(testing::fake_fixture(64ull << 20, {{"cuMemcpyHtoDAsync_v2", "OUT_OF_MEMORY"}}));
  auto l = loader();
  ASSERT_NE(l, nullptr);
  auto memory = CheckpointMemory::allocate(l->session(), checkpoint);
  ASSERT_TRUE(memory);
  auto plan = plan_checkpoint(checkpoint, *memory);
  ASSERT_TRUE(plan);
  auto stats = l->run(*plan);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().fault, Fault::kOutOfMemory);
  EXPECT_NE(stats.error().message.find("tensor '"), std::string::npos) << stats.error().message;
  EXPECT_NE(stats.error().message.find(".safetensors"), std::string::npos);
}

TEST_F(LoaderTest, NoSuchDeviceIsNoCuda) {
  auto made = Loader::create(cuda_, 3, {});
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().fault, Fault::kNoCuda);
  EXPECT_NE(made.error().message.find("GPU 3"), std::string::npos) << made.error().message;
  EXPECT_TRUE(hooks_.all_released());
}

// Issue 6: "100 failing loads in a loop leak nothing".
TEST_F(LoaderTest, AHundredFailingLoadsLeakNothing) {
  auto checkpoint = write_checkpoint();
  const size_t fds_before = testing::open_fd_count();
  for (int i = 0; i < 100; ++i) {
    const int kind = i % 4;
    use_fixture(testing::fake_fixture(kind == 3 ? 20000 : (64ull << 20)));
    LoaderOptions options;
    options.readers = 1 + static_cast<unsigned>(i % 3);
    options.chunk_bytes = 4096;
    options.direct_io = i % 2 == 0 ? DirectIo::kOn : DirectIo::kOff;
    auto l = loader(options);
    ASSERT_NE(l, nullptr);
    if (kind == 0) {  // a truncated file
      auto memory = DeviceBuffer::allocate(l->session(), 8u << 20);
      ASSERT_TRUE(memory);
      RawCase c = raw_case(dir_ / "raw.bin", memory->address());
      fs::resize_file(dir_ / "raw.bin", 1'500'000);
      EXPECT_FALSE(l->run(c.plan));
    } else if (kind == 1) {  // a destination too small: the copy fails after others ran
      auto memory = DeviceBuffer::allocate(l->session(), 2u << 20);
      ASSERT_TRUE(memory);
      RawCase c = raw_case(dir_ / "raw.bin", memory->address());
      EXPECT_FALSE(l->run(c.plan));
    } else if (kind == 2) {  // a file that is not there
      CopyPlan plan;
      plan.files = {checkpoint.shards[0].path, (dir_ / "gone.safetensors").string()};
      plan.copies = {Copy{1, 0, 10, 0x1000, "tensor 'x'"}};
      EXPECT_FALSE(l->run(plan));
    } else {  // out of device memory
      EXPECT_FALSE(CheckpointMemory::allocate(l->session(), checkpoint));
    }
  }
  EXPECT_TRUE(hooks_.all_released())
      << "device " << hooks_.live("device") << ", host " << hooks_.live("host") << ", registered "
      << hooks_.live("registered") << ", streams " << hooks_.live("streams") << ", events "
      << hooks_.live("events") << ", contexts " << hooks_.primary_retained(0);
  EXPECT_EQ(testing::open_fd_count(), fds_before);
}

}  // namespace
}  // namespace sparkdoc::load
