// Files that are not regular files where sparkdoc expects one, through the binary: a FIFO as a
// shard named by an index, as an index, as a dist-info RECORD or METADATA, as torch's library
// and at the journal path; a link to a device as a shard. Each command must finish with a
// message that names the type (a blocking open of a FIFO waits for a writer forever), so each
// runs under `timeout -s KILL` (run blocks SIGTERM to forward it): status 137 is the hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../plan/model_fixtures.h"
#include "../sys/temp_tree.h"
#include "../tune/fake_machine.h"
#include "shell.h"

namespace sparkdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Outcome;
using testing::run_shell;
using tune::testing::FakeMachine;

constexpr int kHung = 128 + 9;  // timeout(1)'s status for a command it had to SIGKILL

// sparkdoc with `args`, stopped after 10 s.
Outcome sparkdoc(const std::string& args) {
  return run_shell("timeout -s KILL 10 " + std::string(SPARKDOC_BIN) + " " + args + " </dev/null");
}

// Replaces `path` by a FIFO nobody writes.
void make_fifo(const fs::path& path) {
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

class SpecialFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::write_fixture(tree_.path() + "/model", testing::tiny_llama(), 2);
  }
  fs::path shard() const { return model_ / "model-00001-of-00002.safetensors"; }

  sys::testing::TempTree tree_;
  fs::path model_;
};

TEST_F(SpecialFiles, AFifoAsAShardNamedByTheIndexDoesNotHangPlanOrLoad) {
  make_fifo(shard());
  for (const std::string command : {"plan", "load"}) {
    Outcome r = sparkdoc(command + " " + model_.string());
    EXPECT_NE(r.status, kHung) << command << ": hung on the FIFO";
    EXPECT_NE(r.status, 0) << command << r.out;
    EXPECT_THAT(r.out, HasSubstr("model-00001-of-00002.safetensors is a FIFO")) << command;
  }
}

TEST_F(SpecialFiles, AFifoAsTheIndexDoesNotHangPlan) {
  make_fifo(model_ / "model.safetensors.index.json");
  Outcome r = sparkdoc("plan " + model_.string());
  EXPECT_NE(r.status, kHung) << "hung on the FIFO";
  EXPECT_THAT(r.out, HasSubstr("model.safetensors.index.json is a FIFO")) << r.out;
}

TEST_F(SpecialFiles, ALinkToADeviceAsAShardIsRefusedByItsType) {
  fs::remove(shard());
  fs::create_symlink("/dev/zero", shard());
  for (const std::string command : {"plan", "load"}) {
    Outcome r = sparkdoc(command + " " + model_.string());
    EXPECT_NE(r.status, 0) << command << r.out;
    EXPECT_THAT(r.out, HasSubstr("model-00001-of-00002.safetensors is a character device"))
        << command;
  }
}

// The default `check` reads every dist-info of the environment: a FIFO planted in a
// site-packages folder must not stop it.
TEST_F(SpecialFiles, FifosInSitePackagesDoNotHangCheck) {
  const std::string site = tree_.path() + "/site-packages";
  tree_.write("site-packages/torch/__init__.py", "");
  tree_.write("site-packages/torch/version.py", "__version__ = '2.9.0'\ncuda = '13.0'\n");
  tree_.mkdir("site-packages/torch/lib");
  make_fifo(site + "/torch/lib/libtorch_python.so");
  tree_.mkdir("site-packages/torch-2.9.0.dist-info");
  make_fifo(site + "/torch-2.9.0.dist-info/RECORD");
  tree_.mkdir("site-packages/odd.dist-info");
  make_fifo(site + "/odd.dist-info/METADATA");
  make_fifo(site + "/old.egg-info");
  for (const std::string command : {"check", "audit", "snapshot"}) {
    Outcome r = sparkdoc(command + " --no-gpu --site-packages " + site);
    EXPECT_NE(r.status, kHung) << command << ": hung on a FIFO\n" << r.out;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << command << r.out;
  }
}

TEST(SpecialFilesJournal, AFifoAtTheJournalPathDoesNotHangCheckOrRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "the journal under a fake root is root's (CI runs as root)";
  FakeMachine root;
  fs::create_directories(fs::path(root.journal().path).parent_path());
  make_fifo(root.journal().path);
  Outcome check = sparkdoc("check --no-gpu --only G3 --root " + root.path());
  EXPECT_NE(check.status, kHung) << "check hung on the journal FIFO";
  Outcome run = sparkdoc("run --root " + root.path() + " --no-preflight --no-watch --log-dir " +
                         root.path() + "/log -- true");
  EXPECT_NE(run.status, kHung) << "run hung on the journal FIFO";
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("is a FIFO"));
}

}  // namespace
}  // namespace sparkdoc
