// Finding a job's files in a folder: by name, without following links, skipping caches and
// virtual environments, and refusing what is not a regular file.
#include "job/read.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkdoc::job {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ClassifyJobFile, ByName) {
  EXPECT_EQ(classify_job_file("train.py"), FileKind::kPython);
  EXPECT_EQ(classify_job_file("Dockerfile"), FileKind::kDockerfile);
  EXPECT_EQ(classify_job_file("Dockerfile.spark"), FileKind::kDockerfile);
  EXPECT_EQ(classify_job_file("train.Dockerfile"), FileKind::kDockerfile);
  EXPECT_EQ(classify_job_file("Containerfile"), FileKind::kDockerfile);
  EXPECT_EQ(classify_job_file("docker-compose.yml"), FileKind::kCompose);
  EXPECT_EQ(classify_job_file("compose.yaml"), FileKind::kCompose);
  EXPECT_EQ(classify_job_file("run.sh"), FileKind::kShell);
  EXPECT_EQ(classify_job_file("Makefile"), FileKind::kMakefile);
  EXPECT_EQ(classify_job_file("requirements-gpu.txt"), FileKind::kRequirements);
  EXPECT_EQ(classify_job_file("pip-freeze.txt"), FileKind::kRequirements);
  EXPECT_EQ(classify_job_file("pyproject.toml"), FileKind::kPyproject);
  EXPECT_EQ(classify_job_file("uv.lock"), FileKind::kUvLock);
  EXPECT_EQ(classify_job_file("CMakeCache.txt"), FileKind::kCMakeCache);
  EXPECT_EQ(classify_job_file("accelerate_config.yaml"), FileKind::kConfig);
  EXPECT_EQ(classify_job_file("ds_config.json"), FileKind::kConfig);
  EXPECT_EQ(classify_job_file("notes.txt"), std::nullopt);
  EXPECT_EQ(classify_job_file("package.json"), std::nullopt);
  EXPECT_EQ(classify_job_file("README.md"), std::nullopt);
}

class JobTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("sparkdoc-job-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    put("train.py", "import torch\n");
    put("docker/Dockerfile", "FROM x\nRUN pip install y\n");
    put("requirements.txt", "transformers==5.5.3\n");
    put(".git/hooks/x.py", "x\n");
    put(".venv/lib/site.py", "x\n");
    put("__pycache__/a.py", "x\n");
    put("blob.py", std::string("\0\x01\x02", 3));
    put("notes.txt", "hello\n");
    fs::create_symlink(root_ / "train.py", root_ / "link.py");
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary) << text;
  }
  fs::path root_;
};

TEST_F(JobTree, ReadsWhatLintReadsAndSaysWhatItSkipped) {
  auto job = read_job({root_.string()});
  ASSERT_TRUE(job) << job.error().message;
  std::vector<std::string> paths;
  for (const auto& f : job->files) paths.push_back(f.path);
  EXPECT_THAT(paths, ElementsAre("docker/Dockerfile", "requirements.txt", "train.py"));
  ASSERT_EQ(job->skipped.size(), 1u);
  EXPECT_THAT(job->skipped[0], HasSubstr("blob.py: binary"));
  EXPECT_EQ(job->files[0].commands.size(), 1u);
  EXPECT_EQ(job->files[1].requirements.size(), 1u);
}

TEST_F(JobTree, AFifoIsRefusedNotOpened) {
  ASSERT_EQ(::mkfifo((root_ / "pipe.py").c_str(), 0644), 0);
  auto job = read_job({root_.string()});
  ASSERT_TRUE(job);
  bool said = false;
  for (const auto& s : job->skipped) said = said || s.find("pipe.py") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(JobTree, AMissingPathIsAnError) {
  auto job = read_job({(root_ / "nope").string()});
  ASSERT_FALSE(job);
  EXPECT_THAT(job.error().message, HasSubstr("no such file or folder"));
}

TEST_F(JobTree, ANamedFileIsReadWhateverItsName) {
  put("train", "#!/usr/bin/env python3\nimport unsloth\n");
  auto job = read_job({(root_ / "train").string()});
  ASSERT_TRUE(job);
  ASSERT_EQ(job->files.size(), 1u);
  EXPECT_EQ(job->files[0].kind, FileKind::kPython);
  EXPECT_TRUE(job->files[0].python.imports_from("unsloth"));
}

}  // namespace
}  // namespace sparkdoc::job
