#include "elf/targets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "fatbin_image.h"
#include "judge.h"

namespace sparkdoc::elf {
namespace {

using testing::build_container;
using testing::build_host_elf;
using testing::cubin_entry;
using ::testing::ElementsAre;
using testing::EntrySpec;
using testing::ptx_entry;

constexpr ComputeCapability kB200{10, 0};
constexpr ComputeCapability kB300{10, 3};

constexpr ArchVariant kPlain = ArchVariant::kPlain;
constexpr ArchVariant kA = ArchVariant::kArchSpecific;
constexpr ArchVariant kF = ArchVariant::kFamilySpecific;

GpuTarget target(uint32_t sm, ArchVariant variant = kPlain) {
  return GpuTarget{sm, variant};
}

Result<GpuCode> code_of(const std::vector<EntrySpec>& entries) {
  const std::string blob = build_container(entries);
  return parse_fatbin_section(blob.data(), blob.size());
}

TEST(ComputeCapability, Parses) {
  EXPECT_EQ(parse_compute_capability("12.1"), (ComputeCapability{12, 1}));
  EXPECT_EQ(parse_compute_capability("9.0"), (ComputeCapability{9, 0}));
  for (const char* bad : {"", "12", "12.", ".1", "12.10", "1a.0", "x", "0.0", "1234.5"}) {
    EXPECT_FALSE(parse_compute_capability(bad).has_value()) << bad;
  }
}

TEST(GpuTarget, Names) {
  EXPECT_EQ(sass_name(target(121, kA)), "sm_121a");
  EXPECT_EQ(sass_name(target(120, kF)), "sm_120f");
  EXPECT_EQ(sass_name(target(90)), "sm_90");
  EXPECT_EQ(ptx_name(target(120, kF)), "compute_120f");
  EXPECT_EQ(ptx_name(target(90)), "compute_90");
}

struct SassCase {
  GpuTarget target;
  ComputeCapability device;
  bool runs;
};

TEST(SassRunsOn, ReferenceTable) {
  const SassCase cases[] = {
      // GB10 (12.1), reference §2.6.
      {target(120), kGb10, true},
      {target(121), kGb10, true},
      {target(120, kF), kGb10, true},
      {target(121, kF), kGb10, true},
      {target(121, kA), kGb10, true},
      {target(120, kA), kGb10, false},
      {target(100), kGb10, false},
      {target(100, kA), kGb10, false},
      {target(103, kA), kGb10, false},
      {target(110), kGb10, false},
      {target(90), kGb10, false},
      {target(90, kA), kGb10, false},
      {target(89), kGb10, false},
      {target(86), kGb10, false},
      {target(75), kGb10, false},
      // 12.0: sm_121 is newer than the device; sm_120a is exactly it.
      {target(121), kRtx5090, false},
      {target(121, kF), kRtx5090, false},
      {target(121, kA), kRtx5090, false},
      {target(120, kA), kRtx5090, true},
      {target(120, kF), kRtx5090, true},
      // 9.0: sm_90a runs on exactly 9.0; older minors of the same major run, no other major.
      {target(90, kA), kH100, true},
      {target(90), kH100, true},
      {target(80), kH100, false},
      {target(100), kH100, false},
      // Blackwell datacenter family: sm_100f and sm_100 run on 10.3, sm_100a does not.
      {target(100, kF), kB300, true},
      {target(100), kB300, true},
      {target(100, kA), kB300, false},
      {target(103, kA), kB300, true},
      {target(103, kF), kB200, false},
  };
  for (const SassCase& c : cases) {
    EXPECT_EQ(sass_runs_on(c.target, c.device), c.runs)
        << sass_name(c.target) << " on " << c.device.major << "." << c.device.minor;
  }
}

TEST(PtxJitRunsOn, ReferenceTable) {
  const SassCase cases[] = {
      {target(90), kGb10, true},       {target(75), kGb10, true},
      {target(100), kGb10, true},      {target(120), kGb10, true},
      {target(121), kGb10, true},      {target(120, kF), kGb10, true},
      {target(121, kF), kGb10, true},  {target(121, kA), kGb10, true},
      {target(120, kA), kGb10, false}, {target(100, kA), kGb10, false},
      {target(100, kF), kGb10, false}, {target(90, kA), kGb10, false},
      {target(121), kRtx5090, false},  {target(90), kH100, true},
      {target(100), kH100, false},     {target(90, kA), kH100, true},
  };
  for (const SassCase& c : cases) {
    EXPECT_EQ(ptx_jit_runs_on(c.target, c.device), c.runs)
        << ptx_name(c.target) << " on " << c.device.major << "." << c.device.minor;
  }
}

TEST(AllowsBlockScaledFp4, ArchAndFamilyBlackwellTargetsOnly) {
  EXPECT_TRUE(allows_block_scaled_fp4(target(121, kA)));
  EXPECT_TRUE(allows_block_scaled_fp4(target(120, kF)));
  EXPECT_TRUE(allows_block_scaled_fp4(target(121, kF)));
  EXPECT_TRUE(allows_block_scaled_fp4(target(120, kA)));
  EXPECT_TRUE(allows_block_scaled_fp4(target(100, kA)));
  EXPECT_FALSE(allows_block_scaled_fp4(target(120)));
  EXPECT_FALSE(allows_block_scaled_fp4(target(121)));
  EXPECT_FALSE(allows_block_scaled_fp4(target(90, kA)));
}

TEST(Judge, Sm90OnlySassWithoutPtxDoesNotRunOnGb10) {
  auto code = code_of({cubin_entry(90, ' ')});
  ASSERT_TRUE(code) << code.error().message;
  const GpuCodeVerdict verdict = judge(*code, kGb10);
  EXPECT_EQ(verdict.run, RunVerdict::kDoesNotRun);
  EXPECT_FALSE(verdict.nvfp4);
  EXPECT_EQ(verdict.containers_none, 1u);
  EXPECT_THAT(verdict.sass_targets, ElementsAre(target(90)));
  EXPECT_EQ(judge(*code, kH100).run, RunVerdict::kSass);
}

TEST(Judge, Sm120SassRunsOnGb10) {
  auto code = code_of({cubin_entry(120, ' ')});
  ASSERT_TRUE(code) << code.error().message;
  const GpuCodeVerdict verdict = judge(*code, kGb10);
  EXPECT_EQ(verdict.run, RunVerdict::kSass);
  EXPECT_FALSE(verdict.nvfp4) << "a plain sm_120 cubin cannot hold block-scaled MMA";
  EXPECT_EQ(verdict.containers_sass, 1u);
}

TEST(Judge, Sm120aDoesNotRunOnGb10) {
  auto code = code_of({cubin_entry(120, 'a')});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(judge(*code, kGb10).run, RunVerdict::kDoesNotRun);
  EXPECT_FALSE(judge(*code, kGb10).nvfp4);
  const GpuCodeVerdict on_5090 = judge(*code, kRtx5090);
  EXPECT_EQ(on_5090.run, RunVerdict::kSass);
  EXPECT_TRUE(on_5090.nvfp4);
}

TEST(Judge, Compute90PtxIsJitOnly) {
  auto code = code_of({ptx_entry(90, ' ')});
  ASSERT_TRUE(code) << code.error().message;
  const GpuCodeVerdict verdict = judge(*code, kGb10);
  EXPECT_EQ(verdict.run, RunVerdict::kPtxJitOnly);
  EXPECT_EQ(verdict.containers_ptx_only, 1u);
  EXPECT_THAT(verdict.ptx_targets, ElementsAre(target(90)));
  EXPECT_EQ(verdict_name(verdict.run), "ptx_jit_only");
}

TEST(Judge, Nvfp4NeedsAnArchOrFamilyTargetThatRuns) {
  for (const auto& [entries, nvfp4] : std::vector<std::pair<std::vector<EntrySpec>, bool>>{
           {{cubin_entry(121, 'a')}, true},
           {{cubin_entry(120, 'f')}, true},
           {{cubin_entry(121, 'f')}, true},
           {{ptx_entry(120, 'f')}, true},
           {{ptx_entry(121, 'a')}, true},
           {{cubin_entry(120, ' '), cubin_entry(121, ' ')}, false},
           {{cubin_entry(120, 'a'), cubin_entry(120, ' ')}, false},
           {{cubin_entry(100, 'a'), ptx_entry(100, 'f')}, false},
       }) {
    auto code = code_of(entries);
    ASSERT_TRUE(code) << code.error().message;
    const GpuCodeVerdict verdict = judge(*code, kGb10);
    EXPECT_EQ(verdict.nvfp4, nvfp4) << sass_name(entry_target(code->entries[0]));
    EXPECT_NE(verdict.run, RunVerdict::kNoGpuCode);
  }
}

TEST(Judge, CountsContainersAndSortsTargets) {
  // torch-like: most translation units have sm_120; one has only Hopper/Blackwell 'a' kernels.
  const std::string blob = build_container({cubin_entry(90, ' '), cubin_entry(120, ' ')}) +
                           build_container({cubin_entry(90, 'a'), cubin_entry(100, 'a')}) +
                           build_container({cubin_entry(80, ' '), ptx_entry(80, ' ')}) +
                           build_container({ptx_entry(121, 'a')});
  auto code = parse_fatbin_section(blob.data(), blob.size());
  ASSERT_TRUE(code) << code.error().message;
  const GpuCodeVerdict verdict = judge(*code, kGb10);
  EXPECT_EQ(verdict.run, RunVerdict::kSass);
  EXPECT_TRUE(verdict.nvfp4);
  EXPECT_EQ(verdict.containers_sass, 1u);
  EXPECT_EQ(verdict.containers_ptx_only, 2u);
  EXPECT_EQ(verdict.containers_none, 1u);
  EXPECT_THAT(verdict.sass_targets,
              ElementsAre(target(80), target(90), target(90, kA), target(100, kA), target(120)));
  EXPECT_THAT(verdict.ptx_targets, ElementsAre(target(80), target(121, kA)));
}

TEST(Judge, LinkedFilesIgnoreRelocatableCopies) {
  const std::string fatbin = build_container({cubin_entry(90, ' ')});
  const std::string relfatbin = build_container({cubin_entry(90, ' '), ptx_entry(90, ' ')});
  const std::string linked =
      build_host_elf({{".nv_fatbin", fatbin}, {"__nv_relfatbin", relfatbin}});
  auto code = parse_gpu_code(std::as_bytes(std::span(linked.data(), linked.size())), "r.so");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(judge(*code, kGb10).run, RunVerdict::kDoesNotRun);

  const std::string object = build_host_elf({{"__nv_relfatbin", relfatbin}}, 1);
  code = parse_gpu_code(std::as_bytes(std::span(object.data(), object.size())), "r.o");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(judge(*code, kGb10).run, RunVerdict::kPtxJitOnly);
}

TEST(Judge, NothingToRun) {
  GpuCode empty;
  EXPECT_EQ(judge(empty, kGb10).run, RunVerdict::kNoGpuCode);
  EntrySpec lto;
  lto.kind = 8;
  lto.payload = "lto";
  auto code = code_of({lto});
  ASSERT_TRUE(code) << code.error().message;
  const GpuCodeVerdict verdict = judge(*code, kGb10);
  EXPECT_EQ(verdict.run, RunVerdict::kDoesNotRun);
  EXPECT_EQ(verdict.containers_none, 1u);
}

TEST(CodeFacts, PtxEntriesKeepTheirIsaVersion) {
  EntrySpec ptx = ptx_entry(90, ' ');
  auto code = code_of({cubin_entry(120, ' '), ptx});
  ASSERT_TRUE(code) << code.error().message;
  auto groups = gpu_code_facts(*code);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_THAT(groups[0].sass, ElementsAre(target(120)));
  ASSERT_EQ(groups[0].ptx.size(), 1u);
  EXPECT_EQ(groups[0].ptx[0].target, target(90));
  EXPECT_EQ(groups[0].ptx[0].isa, ptx_isa(code->entries[1]));
  EXPECT_EQ(groups[0].containers, 1u);
}

TEST(EntryTarget, ArchSpecificFromHeaderOrCubinFamilyFromHeader) {
  EntrySpec patched = cubin_entry(121, 'a');
  patched.flags &= ~kFatbinFlagArchSpecific;  // the cubin still says 'a'
  auto code = code_of({patched, cubin_entry(120, 'f'), ptx_entry(120, 'f'), ptx_entry(90, 'a')});
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(entry_target(code->entries[0]), target(121, kA));
  EXPECT_EQ(entry_target(code->entries[1]), target(120, kF));
  EXPECT_EQ(entry_target(code->entries[2]), target(120, kF));
  EXPECT_EQ(entry_target(code->entries[3]), target(90, kA));
  EXPECT_TRUE(sass_runs_on(entry_target(code->entries[0]), kGb10));
  EXPECT_TRUE(ptx_jit_runs_on(entry_target(code->entries[2]), kGb10));
  EXPECT_FALSE(ptx_jit_runs_on(entry_target(code->entries[3]), kGb10));
}

}  // namespace
}  // namespace sparkdoc::elf
