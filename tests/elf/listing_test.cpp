#include "elf/listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "fatbin_image.h"

namespace sparkdoc::elf {
namespace {

using testing::build_container;
using testing::build_cubin;
using testing::build_host_elf;
using testing::compat_records;
using testing::cubin_entry;
using testing::CubinSpec;
using testing::EntrySpec;
using testing::ptx_entry;

GpuCode parsed(const std::string& blob, std::string_view name) {
  auto code = parse_gpu_code(std::as_bytes(std::span(blob.data(), blob.size())), name);
  EXPECT_TRUE(code) << code.error().message;
  return code ? *code : GpuCode{};
}

TEST(ListingStem, DropsTheDirectoryAndTheLastExtension) {
  EXPECT_EQ(listing_stem("t.so"), "t");
  EXPECT_EQ(listing_stem("/usr/lib/libcublasLt.so.13"), "libcublasLt.so");
  EXPECT_EQ(listing_stem("libtorch_cuda.so"), "libtorch_cuda");
  EXPECT_EQ(listing_stem("site-packages/torch/_C.cpython-312-x86_64-linux-gnu.so"),
            "_C.cpython-312-x86_64-linux-gnu");
  EXPECT_EQ(listing_stem("dir.d/kernel"), "kernel");
  EXPECT_EQ(listing_stem("kernel"), "kernel");
  EXPECT_EQ(listing_stem(".hidden"), ".hidden");
}

TEST(ListElfAndPtx, FileOrderWithSeparateCounters) {
  // The reference's t.fatbin: ELF sm_90a, PTX sm_90a, ELF sm_121a.
  const std::string blob =
      build_container({cubin_entry(90, 'a'), ptx_entry(90, 'a'), cubin_entry(121, 'a')});
  const GpuCode code = parsed(blob, "t.fatbin");
  EXPECT_EQ(list_elf_and_ptx(code, "t.fatbin"),
            "ELF file    1: t.1.sm_90a.cubin\n"
            "PTX file    1: t.1.sm_90a.ptx\n"
            "ELF file    2: t.2.sm_121a.cubin\n");
  EXPECT_EQ(list_exit_status(code), 0);
}

TEST(ListElfAndPtx, FamilyShowsOnPtxOnly) {
  const std::string blob = build_container({cubin_entry(90, ' '), cubin_entry(90, 'a'),
                                            cubin_entry(121, 'a'), cubin_entry(120, 'f')}) +
                           build_container({ptx_entry(120, 'f'), ptx_entry(121, ' ')});
  EXPECT_EQ(list_elf_and_ptx(parsed(blob, "t.fatbin"), "t.fatbin"),
            "ELF file    1: t.1.sm_90.cubin\n"
            "ELF file    2: t.2.sm_90a.cubin\n"
            "ELF file    3: t.3.sm_121a.cubin\n"
            "ELF file    4: t.4.sm_120.cubin\n"
            "PTX file    1: t.1.sm_120f.ptx\n"
            "PTX file    2: t.2.sm_121.ptx\n");
}

TEST(ListElfAndPtx, ElfNamesComeFromTheCubinPtxNamesFromTheHeader) {
  // Reference §2.4: clearing 0x100000 on a 121a cubin keeps "sm_121a"; setting it on an sm_90
  // cubin keeps "sm_90"; setting it on compute_121 PTX gives "sm_121a.ptx".
  EntrySpec cleared = cubin_entry(121, 'a');
  cleared.flags &= ~kFatbinFlagArchSpecific;
  EntrySpec forged = cubin_entry(90, ' ');
  forged.flags |= kFatbinFlagArchSpecific;
  EntrySpec patched_cubin = cubin_entry(121, 'a');
  patched_cubin.payload = build_cubin([] {
    CubinSpec spec;
    spec.compat = compat_records(0);
    return spec;
  }());
  EntrySpec ptx = ptx_entry(121, ' ');
  ptx.flags |= kFatbinFlagArchSpecific;
  const std::string blob = build_container({cleared, forged, patched_cubin, ptx});
  EXPECT_EQ(list_elf_and_ptx(parsed(blob, "p.fatbin"), "p.fatbin"),
            "ELF file    1: p.1.sm_121a.cubin\n"
            "ELF file    2: p.2.sm_90.cubin\n"
            "ELF file    3: p.3.sm_121.cubin\n"
            "PTX file    1: p.1.sm_121a.ptx\n");
}

TEST(ListElfAndPtx, IndexWidthIsFourColumnsAtLeast) {
  std::vector<EntrySpec> entries(2789, cubin_entry(120, ' '));
  const std::string listing =
      list_elf_and_ptx(parsed(build_container(entries), "libtorch_cuda.so"), "libtorch_cuda.so");
  EXPECT_THAT(listing, ::testing::StartsWith("ELF file    1: libtorch_cuda.1.sm_120.cubin\n"));
  EXPECT_THAT(listing, ::testing::HasSubstr("\nELF file   10: libtorch_cuda.10.sm_120.cubin\n"));
  EXPECT_THAT(listing, ::testing::HasSubstr("\nELF file 1000: libtorch_cuda.1000.sm_120.cubin\n"));
  EXPECT_THAT(listing, ::testing::HasSubstr("\nELF file 2789: libtorch_cuda.2789.sm_120.cubin\n"
                                            "cuobjdump info    : No PTX file found to extract from "
                                            "'libtorch_cuda.so'. You may try with -all option.\n"));

  std::vector<EntrySpec> many(10000, ptx_entry(75, ' '));
  const std::string wide = list_elf_and_ptx(parsed(build_container(many), "x.so"), "x.so");
  EXPECT_THAT(wide, ::testing::HasSubstr("\nPTX file 10000: x.10000.sm_75.ptx\n"));
}

TEST(ListElfAndPtx, MessagesWhenAKindIsMissing) {
  const std::string ptx_only = build_container({ptx_entry(90, ' ')});
  EXPECT_EQ(list_elf_and_ptx(parsed(ptx_only, "k.fatbin"), "dir/k.fatbin"),
            "PTX file    1: k.1.sm_90.ptx\n"
            "cuobjdump info    : No ELF file found to extract from 'dir/k.fatbin'. You may try "
            "with -all option.\n");
  EntrySpec lto;
  lto.kind = 8;
  lto.payload = "lto";
  const std::string lto_only = build_container({lto});
  EXPECT_EQ(list_elf_and_ptx(parsed(lto_only, "l.fatbin"), "l.fatbin"),
            "cuobjdump info    : No ELF file found to extract from 'l.fatbin'. You may try with "
            "-all option.\n"
            "cuobjdump info    : No PTX file found to extract from 'l.fatbin'. You may try with "
            "-all option.\n");
}

TEST(ListElfAndPtx, NoDeviceCode) {
  const GpuCode code = parsed(build_host_elf({{".text", "code"}}), "ls");
  EXPECT_EQ(list_elf_and_ptx(code, "/bin/ls"),
            "cuobjdump info    : File '/bin/ls' does not contain device code\n");
  EXPECT_EQ(list_exit_status(code), 255);
}

TEST(ListElfAndPtx, LinkedFilesSkipRelfatbinObjectsListIt) {
  const std::string fatbin = build_container({cubin_entry(90, ' ')});
  const std::string relfatbin = build_container({cubin_entry(90, ' '), ptx_entry(90, ' ')});
  const GpuCode linked =
      parsed(build_host_elf({{".nv_fatbin", fatbin}, {"__nv_relfatbin", relfatbin}}), "r.so");
  EXPECT_EQ(list_elf_and_ptx(linked, "r.so"),
            "ELF file    1: r.1.sm_90.cubin\n"
            "cuobjdump info    : No PTX file found to extract from 'r.so'. You may try with -all "
            "option.\n");
  EXPECT_FALSE(cuobjdump_lists(linked, linked.entries[1]));

  const GpuCode object = parsed(build_host_elf({{"__nv_relfatbin", relfatbin}}, 1), "r.o");
  EXPECT_EQ(list_elf_and_ptx(object, "r.o"),
            "ELF file    1: r.1.sm_90.cubin\n"
            "PTX file    1: r.1.sm_90.ptx\n");

  // cuobjdump reads __nv_relfatbin only where .nv_fatbin holds nothing, whatever the file type.
  const GpuCode only_rel = parsed(build_host_elf({{"__nv_relfatbin", relfatbin}}), "x.so");
  EXPECT_EQ(cuobjdump_section(only_rel), FatbinSection::kNvRelfatbin);
  EXPECT_EQ(list_exit_status(only_rel), 0);
  const GpuCode both_rel =
      parsed(build_host_elf({{".nv_fatbin", fatbin}, {"__nv_relfatbin", relfatbin}}, 1), "y.o");
  EXPECT_EQ(cuobjdump_section(both_rel), FatbinSection::kNvFatbin);
  EXPECT_EQ(list_elf_and_ptx(both_rel, "y.o"),
            "ELF file    1: y.1.sm_90.cubin\n"
            "cuobjdump info    : No PTX file found to extract from 'y.o'. You may try with -all "
            "option.\n");
  const GpuCode empty_nv = parsed(build_host_elf({{".nv_fatbin", std::string(64, '\0')}}), "z.so");
  EXPECT_EQ(list_exit_status(empty_nv), 255);
}

TEST(ListElfAndPtx, SectionBytesListAsTheirSection) {
  const std::string blob = build_container({cubin_entry(90, ' ')});
  auto code = parse_fatbin_section(blob.data(), blob.size(), FatbinSection::kNvFatbin);
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(list_elf_and_ptx(*code, "s.so"),
            "ELF file    1: s.1.sm_90.cubin\n"
            "cuobjdump info    : No PTX file found to extract from 's.so'. You may try with -all "
            "option.\n");
}

TEST(ListElfAndPtx, BareCubinHasNoIndexInItsName) {
  CubinSpec spec;
  spec.compat = compat_records(1);
  const GpuCode code = parsed(build_cubin(spec), "t.cubin");
  EXPECT_EQ(list_elf_and_ptx(code, "t.cubin"),
            "ELF file    1: t.sm_121a.cubin\n"
            "cuobjdump info    : No PTX file found to extract from 't.cubin'. You may try with "
            "-all option.\n");
  EXPECT_EQ(list_exit_status(code), 0);
}

TEST(ListingArch, ElfAndPtxSpellings) {
  const std::string blob = build_container({cubin_entry(120, 'f'), ptx_entry(120, 'f')});
  const GpuCode code = parsed(blob, "f.fatbin");
  EXPECT_EQ(elf_listing_arch(code.entries[0]), "sm_120");
  EXPECT_EQ(ptx_listing_arch(code.entries[1]), "sm_120f");
}

}  // namespace
}  // namespace sparkdoc::elf
