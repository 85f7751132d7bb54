// The committed nvcc 13.0 builds in tests/fixtures/elf (see make_fixtures.sh there): these
// carry the main assertions on machines without nvcc. The *.cuobjdump.txt listings next to
// them follow the rules of shared/reference/fatbin-and-elf.md §5.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <span>
#include <string>

#include "checks/ptx_isa.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "elf/targets.h"
#include "golden.h"
#include "judge.h"

namespace sparkdoc::elf {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/elf/" + name;
}

using sparkdoc::testing::slurp;

GpuCode read(const std::string& name) {
  auto code = read_gpu_code(fixture(name));
  EXPECT_TRUE(code) << code.error().message;
  return code ? *code : GpuCode{};
}

struct Expected {
  EntryKind kind;
  std::string name;  // listed arch: "sm_121a" for ELF, "sm_120f" for PTX
  FatbinSection section;
  Compression compression;
};

void expect_entries(const GpuCode& code, const std::vector<Expected>& expected) {
  ASSERT_EQ(code.entries.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const FatbinEntry& entry = code.entries[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(entry.kind, expected[i].kind);
    EXPECT_EQ(entry.kind == EntryKind::kPtx ? ptx_listing_arch(entry) : elf_listing_arch(entry),
              expected[i].name);
    EXPECT_EQ(entry.section, expected[i].section);
    EXPECT_EQ(entry.compression, expected[i].compression);
  }
}

class Golden : public ::testing::TestWithParam<const char*> {};

TEST_P(Golden, ListingMatchesTheCuobjdumpText) {
  const std::string name = GetParam();
  auto code = read_gpu_code(fixture(name));
  ASSERT_TRUE(code) << code.error().message;
  const std::string golden = slurp(fixture(name + ".cuobjdump.txt"));
  ASSERT_FALSE(golden.empty()) << "missing " << name << ".cuobjdump.txt";
  EXPECT_EQ(list_elf_and_ptx(*code, name), golden);
  EXPECT_EQ(list_exit_status(*code), 0);
}

// Reading container by container (scan_gpu_code + CodeFactsBuilder, as the audit does) gives
// the facts of the whole file, so the same verdict on three devices, and hands over the same
// entries.
TEST_P(Golden, StreamedFactsEqualTheWholeFilesFacts) {
  const std::string name = GetParam();
  const GpuCode whole = read(name);
  for (ComputeCapability device : {kGb10, kRtx5090, kH100}) {
    CodeFactsBuilder builder;
    GpuCode streamed;
    auto kind = scan_gpu_code(fixture(name), [&](const FatbinContainer* container,
                                                 std::span<const FatbinEntry> entries) {
      builder.add(container, entries);
      if (container != nullptr) streamed.containers.push_back(*container);
      streamed.entries.insert(streamed.entries.end(), entries.begin(), entries.end());
    });
    ASSERT_TRUE(kind) << kind.error().message;
    streamed.file_kind = *kind;
    EXPECT_EQ(streamed, whole);
    EXPECT_EQ(builder.listed_section(*kind), cuobjdump_section(whole));
    const auto streamed_facts = builder.groups(builder.listed_section(*kind));
    EXPECT_EQ(streamed_facts, gpu_code_facts(whole));
    EXPECT_EQ(checks::judge_gpu_code(streamed_facts, device), judge(whole, device))
        << device.major << "." << device.minor;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden,
                         ::testing::Values("gencode.so", "zstd.so", "lz4.so", "rdc.o", "rdc.so",
                                           "family.fatbin", "sm120a.fatbin", "ptx90.fatbin",
                                           "sm121a.cubin", "sm121f.cubin", "guard.so",
                                           "guard-zstd.so", "guard-lz4.so", "guard-family.so"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (c == '.' || c == '-') c = '_';
                           }
                           return name;
                         });

constexpr auto kElf = EntryKind::kElf;
constexpr auto kPtx = EntryKind::kPtx;
constexpr auto kNv = FatbinSection::kNvFatbin;
constexpr auto kRel = FatbinSection::kNvRelfatbin;
constexpr auto kFile = FatbinSection::kFatbinFile;
constexpr auto kNone = Compression::kNone;
constexpr auto kZstd = Compression::kZstd;
constexpr auto kLz4 = Compression::kLz4;

TEST(Fixtures, UncompressedSharedLibrary) {
  const GpuCode code = read("gencode.so");
  EXPECT_EQ(code.file_kind, GpuFileKind::kLinkedElf);
  // nvcc -shared adds a device-link container first: kernel-less cubins, one per SASS target.
  ASSERT_EQ(code.containers.size(), 2u);
  EXPECT_EQ(code.containers[0].entry_count, 2u);
  expect_entries(code, {{kElf, "sm_90a", kNv, kNone},
                        {kElf, "sm_121a", kNv, kNone},
                        {kElf, "sm_90a", kNv, kNone},
                        {kElf, "sm_121a", kNv, kNone},
                        {kPtx, "sm_90", kNv, kZstd}});
  for (const FatbinEntry& entry : code.entries) {
    if (entry.kind != kElf) continue;
    ASSERT_TRUE(entry.cubin.has_value());
    EXPECT_EQ(entry.cubin->abi_version, 8);
    EXPECT_EQ(entry.cubin->has_code, entry.container_index == 1);
    EXPECT_FALSE(entry.cubin->accelerators_flag) << "ptxas 13.0 never sets e_flags 0x8";
    EXPECT_EQ(entry.cubin->compat_arch_specific, 1u);
  }
  EXPECT_EQ(code.entries[3].header_compat_arch_specific, 1u) << "SM >= 100 compat copy";
  EXPECT_FALSE(code.entries[2].header_compat_arch_specific.has_value()) << "none below SM 100";
  const FatbinEntry& ptx = code.entries[4];
  EXPECT_EQ(ptx.version_major, 9);
  EXPECT_EQ(ptx.version_minor, 0);
  EXPECT_GT(ptx.uncompressed_size_bytes, ptx.compressed_size_bytes);

  const GpuCodeVerdict gb10 = judge(code, kGb10);
  EXPECT_EQ(gb10.run, RunVerdict::kSass);
  EXPECT_TRUE(gb10.nvfp4);
  EXPECT_EQ(judge(code, kRtx5090).run, RunVerdict::kPtxJitOnly);
  EXPECT_EQ(judge(code, kH100).run, RunVerdict::kSass);
  EXPECT_FALSE(judge(code, kH100).nvfp4);
  EXPECT_EQ(judge(code, ComputeCapability{8, 0}).run, RunVerdict::kDoesNotRun);
}

TEST(Fixtures, ZstdCompressedSharedLibrary) {
  const GpuCode code = read("zstd.so");
  expect_entries(code, {{kElf, "sm_90", kNv, kZstd},
                        {kElf, "sm_120", kNv, kZstd},
                        {kElf, "sm_90", kNv, kZstd},
                        {kPtx, "sm_120", kNv, kZstd},
                        {kElf, "sm_120", kNv, kZstd}});
  for (const FatbinEntry& entry : code.entries) {
    EXPECT_FALSE(entry.cubin.has_value()) << "compressed payloads are not read";
    EXPECT_LE(entry.compressed_size_bytes, entry.payload_size_bytes);
  }
  const GpuCodeVerdict gb10 = judge(code, kGb10);
  EXPECT_EQ(gb10.run, RunVerdict::kSass) << "sm_120 SASS runs on 12.1";
  EXPECT_FALSE(gb10.nvfp4) << "plain sm_120 cannot hold block-scaled MMA";
}

TEST(Fixtures, Lz4PayloadsDecodeToWhatTheHeadersSay) {
  const GpuCode code = read("lz4.so");
  expect_entries(code, {{kElf, "sm_90a", kNv, kLz4},
                        {kElf, "sm_121a", kNv, kLz4},
                        {kElf, "sm_90a", kNv, kLz4},
                        {kElf, "sm_121a", kNv, kLz4},
                        {kPtx, "sm_90", kNv, kLz4}});
  const std::string file = slurp(fixture("lz4.so"));
  const auto image = std::as_bytes(std::span(file.data(), file.size()));
  for (const FatbinEntry& entry : code.entries) {
    SCOPED_TRACE(entry.header_offset);
    auto plain =
        decompress_lz4_block(image.subspan(entry.payload_offset, entry.compressed_size_bytes),
                             entry.uncompressed_size_bytes);
    ASSERT_TRUE(plain) << plain.error().message;
    if (entry.kind == kElf) {
      auto cubin = inspect_cubin(*plain);
      ASSERT_TRUE(cubin) << cubin.error().message;
      EXPECT_EQ(cubin->sm, entry.arch);
      EXPECT_EQ(cubin->arch_specific, entry.elf_arch_specific());
    } else {
      const std::string text(reinterpret_cast<const char*>(plain->data()), plain->size());
      EXPECT_THAT(text, HasSubstr(".target sm_90"));
    }
  }
}

TEST(Fixtures, RelocatableObject) {
  const GpuCode code = read("rdc.o");
  EXPECT_EQ(code.file_kind, GpuFileKind::kRelocatableElf);
  expect_entries(code, {{kElf, "sm_90a", kRel, kZstd},
                        {kElf, "sm_121a", kRel, kZstd},
                        {kPtx, "sm_90", kRel, kZstd}});
  EXPECT_EQ(code.entries[2].ptxas_options, "--compile-only  ");
  EXPECT_EQ(judge(code, kGb10).run, RunVerdict::kSass);
}

TEST(Fixtures, RdcSharedLibraryListsOnlyItsDeviceLinkedCode) {
  const GpuCode code = read("rdc.so");
  EXPECT_EQ(code.file_kind, GpuFileKind::kLinkedElf);
  expect_entries(
      code,
      {{kElf, "sm_90", kNv, kNone}, {kPtx, "sm_90", kRel, kZstd}, {kElf, "sm_90", kRel, kZstd}});
  EXPECT_TRUE(cuobjdump_lists(code, code.entries[0]));
  EXPECT_FALSE(cuobjdump_lists(code, code.entries[1]));
  EXPECT_FALSE(cuobjdump_lists(code, code.entries[2]));
  // sm_90 SASS alone (the PTX sits in __nv_relfatbin only): does not run on 12.1.
  const GpuCodeVerdict gb10 = judge(code, kGb10);
  EXPECT_EQ(gb10.run, RunVerdict::kDoesNotRun);
  EXPECT_TRUE(gb10.ptx_targets.empty());
  EXPECT_EQ(judge(code, kH100).run, RunVerdict::kSass);
}

TEST(Fixtures, FamilyFatbin) {
  const GpuCode code = read("family.fatbin");
  EXPECT_EQ(code.file_kind, GpuFileKind::kFatbin);
  ASSERT_EQ(code.entries.size(), 4u);
  expect_entries(code, {{kPtx, "sm_120f", kFile, kZstd},
                        {kElf, "sm_120", kFile, kNone},
                        {EntryKind::kLtoIr, "sm_121", kFile, kZstd},
                        {kElf, "sm_121", kFile, kNone}});
  EXPECT_TRUE(code.entries[1].family_specific);
  EXPECT_EQ(code.entries[1].cubin->compat_arch_specific, 0u) << "'f' is not in the cubin";
  EXPECT_EQ(code.entries[2].kind_code, 8);
  EXPECT_EQ(code.entries[2].ptxas_options, "-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 ");
  const GpuCodeVerdict gb10 = judge(code, kGb10);
  EXPECT_EQ(gb10.run, RunVerdict::kSass);
  EXPECT_TRUE(gb10.nvfp4) << "sm_120f runs on 12.1 and allows block-scaled MMA";
}

TEST(Fixtures, Sm120aOnlyDoesNotRunOnGb10) {
  const GpuCode code = read("sm120a.fatbin");
  expect_entries(code, {{kElf, "sm_120a", kFile, kNone}});
  EXPECT_EQ(judge(code, kGb10).run, RunVerdict::kDoesNotRun);
  EXPECT_FALSE(judge(code, kGb10).nvfp4);
  EXPECT_EQ(judge(code, kRtx5090).run, RunVerdict::kSass);
  EXPECT_TRUE(judge(code, kRtx5090).nvfp4);
}

TEST(Fixtures, Compute90PtxIsJitOnlyOnGb10) {
  const GpuCode code = read("ptx90.fatbin");
  expect_entries(code, {{kPtx, "sm_90", kFile, kZstd}});
  EXPECT_EQ(judge(code, kGb10).run, RunVerdict::kPtxJitOnly);
  EXPECT_EQ(judge(code, kH100).run, RunVerdict::kPtxJitOnly);
}

TEST(Fixtures, BareCubin) {
  const GpuCode code = read("sm121a.cubin");
  EXPECT_EQ(code.file_kind, GpuFileKind::kCubin);
  expect_entries(code, {{kElf, "sm_121a", FatbinSection::kCubinFile, kNone}});
  EXPECT_TRUE(code.entries[0].cubin->has_code);
  EXPECT_EQ(judge(code, kGb10).run, RunVerdict::kSass);
  EXPECT_TRUE(judge(code, kGb10).nvfp4);
  EXPECT_EQ(judge(code, kRtx5090).run, RunVerdict::kDoesNotRun);
}

// A bare cubin of the sm_121f family (issue 18: read as plain sm_121, so not NVFP4-capable): its
// .note.nv.tkinfo names the family; cuobjdump still lists it as sm_121 (its golden).
TEST(Fixtures, BareFamilyCubinTakesTheFamilyFromItsBuildNote) {
  const GpuCode code = read("sm121f.cubin");
  // Listed as cuobjdump lists it; the audit's target is the family.
  expect_entries(code, {{kElf, "sm_121", FatbinSection::kCubinFile, kNone}});
  EXPECT_EQ(entry_target(code.entries[0]),
            (audit::GpuTarget{121, audit::ArchVariant::kFamilySpecific}));
  EXPECT_EQ(code.entries[0].cubin->build_arch, "sm_121f");
  EXPECT_FALSE(code.entries[0].cubin->arch_specific);
  EXPECT_EQ(judge(code, kGb10).run, RunVerdict::kSass);
  EXPECT_TRUE(judge(code, kGb10).nvfp4);
  EXPECT_EQ(judge(code, kRtx5090).run, RunVerdict::kDoesNotRun);
  // The 'a' cubin's note says sm_121a: 'a' comes from .nv.compat, as before.
  const GpuCode a = read("sm121a.cubin");
  EXPECT_EQ(a.entries[0].cubin->build_arch, "sm_121a");
  EXPECT_FALSE(a.entries[0].family_specific);
}

// The PTX ISA rule on fatbins made with this machine's nvcc 13.0: its PTX is ISA 9.0 whatever
// the -arch=compute_XX, so an R580 driver (CUDA 13000) loads it; PTX versioned 8.7 loads
// too; 9.2 (what CUDA 13.2 writes, packed by fatbinary because nvcc 13.0's ptxas refuses it)
// does not (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
TEST(Fixtures, PtxIsaOfEachEntryAgainstTheDriver) {
  struct Case {
    const char* file;
    const char* isa;
    int needs_cuda;
    bool loads_on_13000;
  };
  for (const Case& c : {Case{"ptx-isa90-compute75.fatbin", "9.0", 13000, true},
                        Case{"ptx90.fatbin", "9.0", 13000, true},
                        Case{"ptx-isa90-compute120.fatbin", "9.0", 13000, true},
                        Case{"ptx-isa87.fatbin", "8.7", 12080, true},
                        Case{"ptx-isa92.fatbin", "9.2", 13020, false}}) {
    SCOPED_TRACE(c.file);
    const GpuCode code = read(c.file);
    ASSERT_EQ(code.entries.size(), 1u);
    EXPECT_EQ(code.entries[0].kind, EntryKind::kPtx);
    EXPECT_EQ(ptx_isa(code.entries[0]), c.isa);
    EXPECT_EQ(checks::cuda_for_ptx_isa(ptx_isa(code.entries[0])), c.needs_cuda);
    EXPECT_EQ(checks::driver_loads_ptx(ptx_isa(code.entries[0]), 13000), c.loads_on_13000);
    EXPECT_EQ(checks::driver_loads_ptx(ptx_isa(code.entries[0]), 13020), true);
  }
}

TEST(PtxIsa, TableAndGarbage) {
  EXPECT_EQ(checks::cuda_for_ptx_isa("8.8"), 12090);
  EXPECT_EQ(checks::cuda_for_ptx_isa("9.1"), 13010);
  EXPECT_EQ(checks::cuda_for_ptx_isa("9.5"), 13050);
  EXPECT_EQ(checks::cuda_for_ptx_isa("7.8"), 12080);  // older ISA: any 12.8+ driver
  EXPECT_EQ(checks::cuda_for_ptx_isa("9.6"), std::nullopt);
  EXPECT_EQ(checks::cuda_for_ptx_isa(""), std::nullopt);
  EXPECT_EQ(checks::cuda_for_ptx_isa("9"), std::nullopt);
  EXPECT_EQ(checks::cuda_for_ptx_isa("x.y"), std::nullopt);
  EXPECT_EQ(checks::driver_loads_ptx("9.0", 0), std::nullopt);
  EXPECT_EQ(checks::cuda_version_text(13020), "13.2");
}

}  // namespace
}  // namespace sparkdoc::elf
