// load/load.h, the pipeline `sparkdoc load` and the C ABI share, against the fake libcuda: a
// checkpoint loaded, run twice and verified, with the observer told each run in order, and a
// missing checkpoint refused before any driver work.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "checkpoint_files.h"
#include "load/load.h"

namespace sparkdoc::load {
namespace {

namespace fs = std::filesystem;
using testing::make_tensor;

// Records what the pipeline says while it goes.
class Recorder : public Observer {
 public:
  void run_starting(const std::atomic<uint64_t>& done, uint64_t total_bytes) override {
    events.push_back("start " + std::to_string(done.load()) + "/" + std::to_string(total_bytes));
  }
  void run_stopped() override { events.push_back("stop"); }
  void measured(int number, const Measured& run) override {
    events.push_back("run " + std::to_string(number) + " " + std::to_string(run.stats.copy_bytes));
  }
  std::vector<std::string> events;
};

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::test_folder("sparkdoc-load-pipeline",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "fixture.json") << testing::fake_fixture(64ull << 20);
    // Cuda::instance() is loaded once per process, from this variable.
    ::setenv("SPARKDOC_CUDA_LIBRARY", SPARKDOC_FAKE_CUDA, 1);
    ::setenv("SPARKDOC_FAKE_GPU_FIXTURE", (dir_ / "fixture.json").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Pipeline, ACheckpointIsLoadedRunTwiceAndVerified) {
  testing::write_safetensors(
      dir_ / "model.safetensors",
      {make_tensor("a.weight", "BF16", {17, 33}, 1), make_tensor("empty", "F32", {0}, 2),
       make_tensor("b.bias", "F32", {5}, 3)});
  CheckpointRequest request;
  request.path = (dir_ / "model.safetensors").string();
  request.options.readers = 2;
  request.runs = 2;
  request.verify = true;
  Recorder recorder;
  auto loaded = load_checkpoint(request, &recorder);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->checkpoint.tensors.size(), 3u);
  ASSERT_EQ(loaded->runs.size(), 2u);
  EXPECT_TRUE(loaded->ok());
  ASSERT_TRUE(loaded->differ);
  EXPECT_TRUE(loaded->differ->empty());
  EXPECT_EQ(loaded->options.readers, 2u);
  EXPECT_GT(loaded->staging_bytes, 0u);
  const std::string total = std::to_string(loaded->checkpoint.data_bytes());
  const std::string copied = std::to_string(loaded->runs[0].stats.copy_bytes);
  EXPECT_EQ(recorder.events,
            (std::vector<std::string>{"start 0/" + total, "stop", "run 1 " + copied,
                                      "start 0/" + total, "stop", "run 2 " + copied}));
  EXPECT_EQ(loaded->runs[0].stats.copy_bytes, loaded->checkpoint.data_bytes());
}

// Flips a byte of the file after each run, so that --verify finds them changed.
class FileChanger : public Recorder {
 public:
  FileChanger(fs::path file, uint64_t offset) : file_(std::move(file)), offset_(offset) {}
  void measured(int number, const Measured& run) override {
    Recorder::measured(number, run);
    std::fstream f(file_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset_));
    char byte = 0;
    f.get(byte);
    f.seekp(static_cast<std::streamoff>(offset_));
    f.put(static_cast<char>(~byte));
  }

 private:
  fs::path file_;
  uint64_t offset_;
};

// Issue 21 item 11: a million tiny tensors took 70 s to verify, a read and a copy each; the
// comparison now goes in pieces of the shard, and still names the tensors that differ.
TEST_F(Pipeline, VerifyComparesInPiecesAndNamesWhatDiffers) {
  std::vector<testing::TensorData> tensors;
  for (uint32_t i = 0; i < 3000; ++i) {
    tensors.push_back(make_tensor("t" + std::to_string(i), "F32", {1}, i + 1));
  }
  const uint64_t data_start = testing::write_safetensors(dir_ / "model.safetensors", tensors);
  // A byte of tensor t1234; then, loading the file as it now is, the first byte of t2999.
  FileChanger changer(dir_ / "model.safetensors", data_start + 1234 * 4 + 2);
  testing::FakeCudaHooks hooks;
  CheckpointRequest request;
  request.path = (dir_ / "model.safetensors").string();
  request.options.readers = 2;
  request.verify = true;
  const long copies_before = hooks.calls("cuMemcpyDtoH_v2");
  auto loaded = load_checkpoint(request, &changer);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(loaded->differ);
  EXPECT_EQ(*loaded->differ, std::vector<std::string>{"t1234"});
  // 12,000 bytes of data: one piece, one copy back from the device (not 3,000).
  EXPECT_EQ(hooks.calls("cuMemcpyDtoH_v2") - copies_before, 1);

  FileChanger last(dir_ / "model.safetensors", data_start + 2999 * 4);
  auto again = load_checkpoint(request, &last);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again->differ, std::vector<std::string>{"t2999"});
}

TEST_F(Pipeline, AMissingCheckpointIsNotFound) {
  CheckpointRequest request;
  request.path = (dir_ / "missing.safetensors").string();
  Recorder recorder;
  auto loaded = load_checkpoint(request, &recorder);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().fault, Fault::kNotFound);
  EXPECT_TRUE(recorder.events.empty());
}

}  // namespace
}  // namespace sparkdoc::load
