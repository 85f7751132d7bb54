// The sm120-only guard through the audit (elf/guards.h): vLLM's extension built with an sm_121a
// cubin that traps is a FAIL for 12.1 in the package's notes, S9 and the matrix, and nothing
// on 12.0 (the driver runs the sm_120 kernels there); the 12.0f family build is no trap; the
// facts survive the audit's cache and the snapshot's JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "audit/audit.h"
#include "checks/native_code.h"
#include "checks/registry.h"
#include "facts/platform.h"
#include "model/native_json.h"
#include "model/snapshot_json.h"
#include "report/audit.h"
#include "site_layout.h"

namespace sparkdoc::audit {
namespace {

namespace fs = std::filesystem;
using checks::CodeRuns;
using checks::NativeVerdict;
using checks::PackageVerdict;
using checks::Severity;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class GuardTree : public ::testing::Test, public testing::SiteTree {
 protected:
  void SetUp() override {
    built_ = AUDIT_FIXTURE_DIR;
    root_ = ::testing::TempDir() + "sparkdoc-guard-" + std::to_string(::getpid());
    fs::remove_all(root_);
    site_ = "/venv/lib/python3.12/site-packages";
    put("torch/__init__.py", "");
    copy("ext_sm120.so", "torch/lib/libtorch_cuda.so");
    copy("lib/libcudart.so.13", "nvidia/cu13/lib/libcudart.so.13");
    record("torch-2.11.0.dist-info", {"torch/lib/libtorch_cuda.so"});
    record("nvidia_cuda_runtime-13.0.96.dist-info", {"nvidia/cu13/lib/libcudart.so.13"});
    record("vllm-0.19.0.dist-info", {"vllm/_C.abi3.so"});
  }
  void TearDown() override { fs::remove_all(root_); }

  NativeAudit facts(bool cache = false, AuditStats* stats = nullptr) {
    AuditOptions o;
    o.root = Root(root_);
    o.site_packages = site_;
    o.torch_cuda = "13.0";
    o.threads = 2;
    if (cache) o.cache_root = root_ + "/cache";
    o.cache_settle_ns = 0;
    return run_audit(o, stats);
  }
  static const PackageVerdict& vllm(const NativeVerdict& v) {
    for (const auto& p : v.packages) {
      if (p.key == "vllm") return p;
    }
    static PackageVerdict none;
    ADD_FAILURE() << "no vllm";
    return none;
  }
};

TEST_F(GuardTree, TheSm121CubinTrapsOnGb10) {
  copy("ext_guard.so", "vllm/_C.abi3.so");
  const NativeAudit f = facts();
  NativeVerdict v = checks::judge_native(f, checks::NativeTarget{{12, 1}, "test"});
  const PackageVerdict& p = vllm(v);
  EXPECT_EQ(p.gpu, CodeRuns::kSass) << "the image is there; its kernels trap";
  EXPECT_THAT(p.gpu_files_trapping, ElementsAre("vllm/_C.abi3.so"));
  EXPECT_THAT(p.trapping_targets, ElementsAre("sm_121a"));
  ASSERT_FALSE(p.notes.empty());
  EXPECT_EQ(p.notes[0].severity, Severity::kFail);
  EXPECT_THAT(p.notes[0].text, HasSubstr("This kernel only supports sm120."));
  EXPECT_THAT(p.notes[0].text, HasSubstr("vllm/_C.abi3.so has sm_121a kernels"));
  EXPECT_THAT(report::render_audit_text(f, v), HasSubstr("FAIL vllm 0.19.0"));
  EXPECT_THAT(report::render_audit_matrix_text(f, v), HasSubstr("trap"));
  EXPECT_EQ(report::audit_exit_status(v), 1);

  // On 12.0 the driver takes the sm_120 cubin, which holds the kernel itself.
  NativeVerdict rtx = checks::judge_native(f, checks::NativeTarget{{12, 0}, "test"});
  EXPECT_THAT(vllm(rtx).gpu_files_trapping, IsEmpty());
  for (const auto& n : vllm(rtx).notes) EXPECT_THAT(n.text, ::testing::Not(HasSubstr("sm120")));
}

TEST_F(GuardTree, S9FailsThePackage) {
  copy("ext_guard.so", "vllm/_C.abi3.so");
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/gb10-healthy-ngc.json");
  auto snapshot = snapshot_from_json(nlohmann::json::parse(in));
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  snapshot->native_code = facts();
  facts::Platform platform = facts::classify_platform(*snapshot);
  checks::Finding s9 = checks::s9_native_extensions().run(*snapshot, {}, platform);
  EXPECT_EQ(s9.verdict, checks::Verdict::kFail);
  EXPECT_THAT(s9.detail, HasSubstr("sm120-only guard"));
}

TEST_F(GuardTree, AFamilyBuildIsNoTrap) {
  copy("ext_guard_family.so", "vllm/_C.abi3.so");
  NativeVerdict v = checks::judge_native(facts(), checks::NativeTarget{{12, 1}, "test"});
  const PackageVerdict& p = vllm(v);
  EXPECT_EQ(p.gpu, CodeRuns::kSass) << "sm_120f runs on 12.1";
  EXPECT_THAT(p.gpu_files_trapping, IsEmpty());
  for (const auto& n : p.notes) EXPECT_NE(n.severity, Severity::kFail) << n.text;
}

// NVIDIA's wheels are not read for it: cuDNN's 192 sm_121 cubins would cost every uncached
// audit 0.4 s, and the guard is vLLM's.
TEST_F(GuardTree, NvidiasOwnWheelsAreNotReadForIt) {
  copy("ext_guard.so", "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9");
  record("nvidia_cudnn_cu13-9.14.0.dist-info", {"nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9"});
  for (const NativeFile& f : facts().files) {
    for (const CodeGroup& g : f.gpu_code) EXPECT_THAT(g.sm120_only, IsEmpty()) << f.file;
  }
}

TEST_F(GuardTree, TheFactSurvivesTheCacheAndTheSnapshot) {
  copy("ext_guard.so", "vllm/_C.abi3.so");
  const NativeAudit read = facts(true);
  AuditStats stats;
  const NativeAudit cached = facts(true, &stats);
  EXPECT_EQ(stats.files_read, 0u) << "every file's facts from the cache";
  ASSERT_EQ(read.files.size(), cached.files.size());
  for (size_t i = 0; i < read.files.size(); ++i) {
    EXPECT_EQ(read.files[i], cached.files[i]) << read.files[i].file;
  }
  const NativeFile* ext = nullptr;
  for (const NativeFile& f : read.files) {
    if (f.file == "vllm/_C.abi3.so") ext = &f;
  }
  ASSERT_NE(ext, nullptr);
  nlohmann::json j = *ext;
  EXPECT_THAT(j.dump(), HasSubstr(R"("sm120_only_sass":["sm_121a"])"));
  EXPECT_EQ(j.get<NativeFile>(), *ext);
  nlohmann::json torch = read.files.front();
  EXPECT_THAT(torch.dump(), ::testing::Not(HasSubstr("sm120_only"))) << "written only when found";
}

}  // namespace
}  // namespace sparkdoc::audit
