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
