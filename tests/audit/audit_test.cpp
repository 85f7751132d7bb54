// The audit over a site-packages tree laid out at test time from shared objects the build
// made (tests/audit/CMakeLists.txt): loader resolution with torch's preload, CUDA majors, the
// GPU code facts and the checks' verdicts on them for 12.1 (and other targets), the known
// packages' rules, per-file errors, and what G1, G2, S9 and G7 then say.
#include "audit/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "audit/scan.h"
#include "checks/common.h"
#include "checks/native_code.h"
#include "checks/registry.h"
#include "core/paths.h"
#include "facts/platform.h"
#include "model/snapshot_json.h"
#include "report/audit.h"
#include "site_layout.h"

namespace sparkdoc::audit {
namespace {

namespace fs = std::filesystem;
using checks::CodeRuns;
using checks::NativeVerdict;
using checks::NoteTopic;
using checks::PackageVerdict;
using checks::Severity;
using ::testing::HasSubstr;
using testing::kBuilt;

class AuditTree : public ::testing::Test, public testing::SiteTree {
 protected:
  void SetUp() override {
    built_ = kBuilt;
    root_ = ::testing::TempDir() + "sparkdoc-audit-" + std::to_string(::getpid());
    fs::remove_all(root_);
    site_ = "/venv/lib/python3.12/site-packages";
    testing::lay_out_gpu_packages(*this, host_multiarch());
    copy("ext_sm120.so", "mamba_ssm/ops/triton_helper.so");
    record("mamba_ssm-2.2.4.dist-info", {"mamba_ssm/ops/triton_helper.so"});
    copy("ext_sm90.so", "nvidia/cu13/lib/libcufft.so.12");
    record("nvidia_cufft-12.0.0.61.dist-info", {"nvidia/cu13/lib/libcufft.so.12"});
    put("broken/garbage.so", "this is not an ELF file at all");
    std::ifstream in(kBuilt + "/ext_sm120.so", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    put("broken/truncated.so", bytes.substr(0, 100));
  }
  void TearDown() override { fs::remove_all(root_); }

  NativeAudit facts() {
    AuditOptions o;
    o.root = Root(root_);
    o.site_packages = site_;
    o.torch_cuda = "13.0";
    o.threads = 3;
    return run_audit(o);
  }
  NativeVerdict audit(std::optional<gpu::ComputeCapability> cc = gpu::ComputeCapability{12, 1}) {
    std::optional<checks::NativeTarget> target;
    if (cc) target = checks::NativeTarget{*cc, "test"};
    return checks::judge_native(facts(), target);
  }

  static const PackageVerdict& package(const NativeVerdict& r, const std::string& key) {
    for (const auto& p : r.packages) {
      if (p.key == key) return p;
    }
    static PackageVerdict none;
    ADD_FAILURE() << "no package " << key;
    return none;
  }
};

TEST_F(AuditTree, VerdictsForGb10) {
  NativeVerdict r = audit();
  ASSERT_TRUE(r.target);
  EXPECT_EQ(audit::compute_capability_text(r.target->cc), "12.1");
  EXPECT_EQ(r.files, 11u);
  EXPECT_EQ(r.errors, 2u) << "garbage and truncated files are errors of their own";

  const PackageVerdict& torch = package(r, "torch");
  EXPECT_EQ(torch.gpu, CodeRuns::kSass) << "sm_120 SASS runs on 12.1";
  EXPECT_THAT(torch.cuda_majors, ::testing::ElementsAre(13));
  EXPECT_TRUE(torch.problems.empty()) << "libcudart.so.13 comes from torch's preload";

  const PackageVerdict& fa = package(r, "flash-attn");
  EXPECT_EQ(fa.gpu, CodeRuns::kDoesNotRun) << "sm_90-only SASS without PTX";
  EXPECT_THAT(fa.sass_targets, ::testing::ElementsAre("sm_90"));
  ASSERT_FALSE(fa.notes.empty());
  EXPECT_EQ(fa.notes.front().severity, Severity::kFail);
  EXPECT_THAT(fa.notes.front().text, HasSubstr("no GPU code for 12.1"));

  EXPECT_EQ(package(r, "jitpkg").gpu, CodeRuns::kPtxJitOnly) << "compute_90 PTX";
  EXPECT_EQ(package(r, "apkg").gpu, CodeRuns::kDoesNotRun) << "sm_120a runs on 12.0 only";
  EXPECT_EQ(package(r, "vllm").gpu, CodeRuns::kSass);
  EXPECT_TRUE(package(r, "vllm").nvfp4) << "sm_120f is an NVFP4 target on 12.1";
  EXPECT_FALSE(torch.nvfp4);

  const PackageVerdict& bad = package(r, "badpkg");
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_EQ(bad.problems[0].soname, "libcudart.so.12");
  EXPECT_FALSE(bad.problems[0].resolved);
  EXPECT_EQ(bad.problems[0].cuda_major, 12);
  EXPECT_TRUE(bad.problems[0].cuda_library);
  ASSERT_FALSE(bad.notes.empty());
  EXPECT_EQ(bad.notes[0].topic, NoteTopic::kLibraries);
  EXPECT_EQ(bad.notes[0].severity, Severity::kFail);
  EXPECT_THAT(bad.notes[0].text, HasSubstr("badpkg/_C.so needs libcudart.so.12"));

  bool mamba_warns = false;
  for (const auto& n : package(r, "mamba-ssm").notes) {
    mamba_warns |=
        n.severity == Severity::kWarn && n.text.find("selective_scan_cuda") != std::string::npos;
  }
  EXPECT_TRUE(mamba_warns);
  EXPECT_EQ(package(r, "broken").errors.size(), 2u);

  // cuFFT lists only sm_75 in .nv_fatbin and loads its real kernels from .ldata: NVIDIA's
  // libraries are described, never failed, on what .nv_fatbin lacks.
  const PackageVerdict& cufft = package(r, "nvidia-cufft");
  EXPECT_EQ(cufft.gpu, CodeRuns::kDoesNotRun);
  ASSERT_EQ(cufft.notes.size(), 1u);
  EXPECT_EQ(cufft.notes[0].severity, Severity::kInfo);

  std::string text = report::render_audit_text(facts(), r);
  EXPECT_THAT(text, HasSubstr("FAIL flash_attn 2.7.4"));
  EXPECT_THAT(text, HasSubstr("FAIL badpkg 1.0"));
  EXPECT_EQ(report::audit_exit_status(r), 1);
}

// 000 §4 patches mamba-ssm's selective_scan_interface.py to import selective_scan_cuda inside
// try/except; once the audit reads that, the missing extension is a note, not a warning.
TEST_F(AuditTree, MambaWithoutItsExtensionStopsWarningOnceTheImportIsGuarded) {
  auto mamba_notes = [this] {
    std::vector<checks::NativeNote> out;
    const NativeVerdict verdict = audit();
    for (const auto& n : package(verdict, "mamba-ssm").notes) {
      if (n.text.find("selective_scan_cuda") != std::string::npos) out.push_back(n);
    }
    return out;
  };
  put("mamba_ssm/ops/selective_scan_interface.py",
      "import torch\nimport selective_scan_cuda\n\ndef f():\n    pass\n");
  EXPECT_TRUE(facts().guarded_imports.empty());
  ASSERT_EQ(mamba_notes().size(), 1u);
  EXPECT_EQ(mamba_notes()[0].severity, Severity::kWarn);

  put("mamba_ssm/ops/selective_scan_interface.py",
      "import torch\n\ntry:\n    import selective_scan_cuda\nexcept ImportError:\n"
      "    selective_scan_cuda = None\n");
  EXPECT_THAT(facts().guarded_imports, ::testing::ElementsAre("selective_scan_cuda"));
  ASSERT_EQ(mamba_notes().size(), 1u);
  EXPECT_EQ(mamba_notes()[0].severity, Severity::kInfo);
  EXPECT_THAT(mamba_notes()[0].text, HasSubstr("000 §4's patch"));
}

TEST(ImportIsGuarded, OnlyAnIndentedImportUnderTryCounts) {
  EXPECT_TRUE(import_is_guarded("try:\n    import m\nexcept ImportError:\n    m = None\n", "m"));
  EXPECT_TRUE(import_is_guarded("try:\r\n\timport m\r\nexcept Exception:\r\n  pass\r\n", "m"));
  EXPECT_FALSE(import_is_guarded("import m\n", "m"));
  EXPECT_FALSE(
      import_is_guarded("try:\n    import m\nexcept ImportError:\n    pass\nimport m\n", "m"));
  EXPECT_FALSE(import_is_guarded("if x:\n    import m\n", "m"));
  EXPECT_FALSE(import_is_guarded("try:\n    import mm\nexcept: pass\n", "m"));
  EXPECT_FALSE(import_is_guarded("", "m"));
}

TEST_F(AuditTree, Sm120aRunsOnlyOn120AndNothingIsJudgedWithoutATarget) {
  EXPECT_EQ(package(audit(gpu::ComputeCapability{12, 0}), "apkg").gpu, CodeRuns::kSass);
  NativeVerdict none = audit(std::nullopt);
  EXPECT_FALSE(none.target);
  EXPECT_EQ(package(none, "apkg").gpu, CodeRuns::kNotJudged);
  EXPECT_THAT(report::render_audit_text(facts(), none), HasSubstr("not judged"));
}

TEST_F(AuditTree, ChecksNameThePackageAndSoname) {
  NativeAudit r = facts();
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/gb10-healthy-ngc.json");
  auto snapshot = snapshot_from_json(nlohmann::json::parse(in));
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  snapshot->native_code = r;
  // The fixture's torch environment gains the flash-attn the tree holds.
  auto& env = (*snapshot->python)[0];
  env.packages["flash-attn"] = pyenv::Distribution{"flash-attn", "2.7.4", "/x"};
  facts::Platform p = facts::classify_platform(*snapshot);

  checks::Finding g1 = checks::g1_cuda_abi().run(*snapshot, {}, p);
  EXPECT_EQ(g1.verdict, checks::Verdict::kFail);
  EXPECT_THAT(g1.detail, HasSubstr("badpkg 1.0: badpkg/_C.so needs libcudart.so.12"));

  checks::Finding g2 = checks::g2_flash_attn().run(*snapshot, {}, p);
  EXPECT_EQ(g2.verdict, checks::Verdict::kFail);
  EXPECT_THAT(g2.detail, HasSubstr("no GPU code for 12.1"));

  checks::Finding s9 = checks::s9_native_extensions().run(*snapshot, {}, p);
  EXPECT_EQ(s9.verdict, checks::Verdict::kFail);
  EXPECT_THAT(s9.detail, ::testing::Not(HasSubstr("flash_attn"))) << "G2 reports flash-attn";

  checks::Finding g7 = checks::g7_nvfp4().run(*snapshot, {}, p);
  EXPECT_THAT(g7.detail, HasSubstr("NVFP4-capable code in: vllm"));

  // --arch judges the same facts for another GPU: on 9.0 flash-attn's sm_90 code runs.
  Workload hopper;
  hopper.arch = gpu::ComputeCapability{9, 0};
  checks::Finding g2_hopper = checks::g2_flash_attn().run(*snapshot, hopper, p);
  EXPECT_THAT(g2_hopper.detail, ::testing::Not(HasSubstr("no GPU code")));
}

// A snapshot recorded on an H200 holds the audit's facts, not verdicts for 9.0: judged with
// --arch 12.1 it says what would not run on a DGX Spark.
TEST_F(AuditTree, ARecordedH200SnapshotIsJudgedForGb10) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/h200-idle.json");
  auto snapshot = snapshot_from_json(nlohmann::json::parse(in));
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  snapshot->native_code = facts();
  auto reread = snapshot_from_text(snapshot_to_text(*snapshot));
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(*reread, *snapshot) << "the facts survive the snapshot file";
  facts::Platform p = facts::classify_platform(*reread);
  ASSERT_TRUE(p.compute_capability);
  EXPECT_EQ(p.compute_capability->major, 9);

  checks::Finding on_h200 = checks::s9_native_extensions().run(*reread, {}, p);
  EXPECT_THAT(on_h200.detail, HasSubstr("9.0"));
  Workload spark;
  spark.arch = gpu::ComputeCapability{12, 1};
  checks::Finding on_gb10 = checks::s9_native_extensions().run(*reread, spark, p);
  EXPECT_EQ(on_gb10.verdict, checks::Verdict::kFail);
  EXPECT_THAT(on_gb10.detail, HasSubstr("no GPU code for 12.1"));
  checks::Finding g2 = checks::g2_flash_attn().run(*reread, spark, p);
  (void)g2;
}

// Schema 1 kept verdicts for one GPU: such a snapshot still reads, with its native code absent
// and the reason given, so that nothing is judged from verdicts made for another target.
TEST(SnapshotSchema, AVersion1AuditReadsAsAbsentWithTheReason) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/h200-idle.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["schema_version"] = 1;
  doc["native_code"] = {
      {"site_packages", "/venv"}, {"target", "9.0"}, {"packages", nlohmann::json::array()}};
  auto snapshot = snapshot_from_json(doc);
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  ASSERT_FALSE(snapshot->native_code.ok());
  EXPECT_THAT(snapshot->native_code.missing().detail, HasSubstr("snapshot schema 1"));
  std::string why;
  EXPECT_FALSE(checks::native_verdict(*snapshot, {}, facts::classify_platform(*snapshot), &why));
  EXPECT_THAT(why, HasSubstr("record the snapshot again"));
}

}  // namespace
}  // namespace sparkdoc::audit
