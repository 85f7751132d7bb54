#include "elf/cubin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "fatbin_image.h"

namespace sparkdoc::elf {
namespace {

using testing::as_bytes;
using testing::build_cubin;
using testing::compat_records;
using testing::CubinSpec;
using ::testing::HasSubstr;

Result<CubinInfo> inspect(const CubinSpec& spec) {
  const std::string image = build_cubin(spec);
  return inspect_cubin(as_bytes(image));
}

TEST(InspectCubin, Cuda13MarksArchSpecificOnlyInCompat) {
  // ptxas 13.0, sm_121a: e_flags 0x06007902 (no 0x8), .nv.compat attribute 9 = 1.
  CubinSpec spec;
  spec.compat = compat_records(1);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 121u);
  EXPECT_FALSE(info->accelerators_flag);
  EXPECT_EQ(info->compat_arch_specific, 1u);
  EXPECT_TRUE(info->arch_specific);
  EXPECT_TRUE(info->has_code);
  EXPECT_EQ(info->elf_type, 2);
  EXPECT_EQ(info->os_abi, 0x41);
  EXPECT_EQ(info->abi_version, 8);
}

TEST(InspectCubin, Cuda13PlainAndFamilyCubinsHaveAttributeZero) {
  CubinSpec spec;
  spec.e_flags = 0x06007802;  // sm_120 or sm_120f: identical in the cubin
  spec.compat = compat_records(0);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 120u);
  EXPECT_EQ(info->compat_arch_specific, 0u);
  EXPECT_FALSE(info->arch_specific);
}

TEST(InspectCubin, Ptxas128AbiV8SetsBit8) {
  // ptxas 12.8/12.9: sm_120a is 0x0600780a and .nv.compat has no attribute 9.
  CubinSpec spec;
  spec.e_flags = 0x0600780a;
  spec.compat = std::string("\x02\x02\x01\x00", 4);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 120u);
  EXPECT_TRUE(info->accelerators_flag);
  EXPECT_FALSE(info->compat_arch_specific.has_value());
  EXPECT_TRUE(info->arch_specific);
}

TEST(InspectCubin, AbiV7ReadsSmFromTheLowByteAnd0x800) {
  // ptxas 12.8 sm_90a and sm_90 (ABI v7, OSABI 0x33, no .nv.compat).
  CubinSpec spec;
  spec.os_abi = 0x33;
  spec.abi_version = 7;
  spec.e_flags = 0x005a0d5a;
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 90u);
  EXPECT_TRUE(info->arch_specific);
  EXPECT_FALSE(info->compat_arch_specific.has_value());

  spec.e_flags = 0x005a055a;
  info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 90u);
  EXPECT_FALSE(info->arch_specific);
}

TEST(InspectCubin, AbiV7IgnoresCompatAttribute) {
  // cuobjdump 13.0 reads 'a' of ABI v7 cubins from e_flags 0x800 only (reference §2.5).
  CubinSpec spec;
  spec.os_abi = 0x33;
  spec.abi_version = 7;
  spec.e_flags = 0x00460546;  // sm_70
  spec.compat = compat_records(1);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 70u);
  EXPECT_EQ(info->compat_arch_specific, 1u);
  EXPECT_FALSE(info->arch_specific);
}

TEST(InspectCubin, DecimalOsAbi41IsAbiV8) {
  CubinSpec spec;
  spec.os_abi = 41;
  spec.abi_version = 0;
  spec.e_flags = 0x06005a04;
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 90u);
}

TEST(InspectCubin, Elf32Cubin) {
  CubinSpec spec;
  spec.is_64 = false;
  spec.compat = compat_records(1);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->sm, 121u);
  EXPECT_TRUE(info->arch_specific);
}

TEST(InspectCubin, DeviceLinkCubinHasNoCode) {
  CubinSpec spec;
  spec.with_code = false;
  spec.e_flags = 0x05007902;
  spec.compat = compat_records(0);
  auto info = inspect(spec);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_FALSE(info->has_code);
}

TEST(InspectCubin, RefusesWhatIsNotACubin) {
  CubinSpec spec;
  spec.machine = 62;
  auto info = inspect(spec);
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error().message, HasSubstr("e_machine 62"));

  std::string big_endian = build_cubin(CubinSpec{});
  big_endian[5] = 2;
  EXPECT_FALSE(inspect_cubin(as_bytes(big_endian)));

  EXPECT_FALSE(inspect_cubin({}));
  std::string text = "not an ELF image at all, just text";
  EXPECT_FALSE(inspect_cubin(as_bytes(text)));
}

TEST(InspectCubin, EveryTruncationFailsCleanly) {
  CubinSpec spec;
  spec.compat = compat_records(1);
  const std::string image = build_cubin(spec);
  for (size_t size = 0; size < image.size(); ++size) {
    // The section table sits at the end, so every prefix loses part of it.
    EXPECT_FALSE(inspect_cubin(as_bytes(image).first(size))) << size;
  }
  EXPECT_TRUE(inspect_cubin(as_bytes(image)));
}

TEST(InspectCubin, SectionTableOutOfRange) {
  std::string image = build_cubin(CubinSpec{});
  testing::put_le(image, 0x28, 0xfffffffffffffff0ull, 8);
  auto info = inspect_cubin(as_bytes(image));
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error().message, HasSubstr("section headers"));

  image = build_cubin(CubinSpec{});
  testing::put_le(image, 0x3c, 0xffff, 2);
  EXPECT_FALSE(inspect_cubin(as_bytes(image)));

  CubinSpec spec;
  spec.compat = compat_records(1);
  image = build_cubin(spec);
  const size_t compat_header = image.size() - 64;
  testing::put_le(image, compat_header + 0x20, 0x100000, 8);  // sh_size beyond the image
  info = inspect_cubin(as_bytes(image));
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error().message, HasSubstr(".nv.compat"));
}

TEST(FindCompatAttribute, RecordFormats) {
  const std::string records = std::string("\x01\x07", 2) +          // format 1: no value
                              std::string("\x03\x05\x34\x12", 4) +  // format 3: u16
                              std::string("\x04\x0b\x02\x00\xaa\xbb", 6) +
                              std::string("\x02\x09\x01\x00", 4);
  const auto bytes = as_bytes(records);
  EXPECT_EQ(find_compat_attribute(bytes, 0x07), 0u);
  EXPECT_EQ(find_compat_attribute(bytes, 0x05), 0x1234u);
  EXPECT_EQ(find_compat_attribute(bytes, 0x0b), 2u);
  EXPECT_EQ(find_compat_attribute(bytes, 0x09), 1u);
  EXPECT_FALSE(find_compat_attribute(bytes, 0x0c).has_value());
  // An unknown format ends the walk; a cut-off record is not read.
  const std::string unknown = std::string("\x07\x01\x02\x09\x01\x00", 6);
  EXPECT_FALSE(find_compat_attribute(as_bytes(unknown), 0x09).has_value());
  EXPECT_FALSE(find_compat_attribute(bytes.first(1), 0x07).has_value());
  EXPECT_FALSE(find_compat_attribute(as_bytes(records).first(14), 0x09).has_value());
}

// The descriptor of the note ptxas 13.0 writes (bytes of sm121f.cubin's .note.nv.tkinfo): a
// header of six words, then "ptxas", the toolkit release, the build and the options.
std::string tkinfo_note(std::string_view options, uint32_t type = 2000,
                        std::string_view owner = std::string_view("NVIDIA Corp\0", 12)) {
  std::string strings =
      std::string("\0ptxas\0Cuda compilation tools, release 13.0, V13.0.88\0", 55) +
      "Build cuda_13.0.r13.0/compiler.36424714_0" + std::string(1, '\0') + std::string(options) +
      std::string(1, '\0');
  std::string desc(24, '\0');
  desc[0] = 2;
  desc += strings;
  while (desc.size() % 4 != 0) desc += '\0';
  std::string note(12, '\0');
  auto put = [&note](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) note[at + i] = static_cast<char>(v >> (8 * i));
  };
  put(0, static_cast<uint32_t>(owner.size()));
  put(4, static_cast<uint32_t>(desc.size()));
  put(8, type);
  note += owner;
  while (note.size() % 4 != 0) note += '\0';
  return note + desc;
}

std::span<const std::byte> as_span(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(BuildNote, TheArchOptionOfPtxasIsRead) {
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-arch sm_121f -m 64 "))), "sm_121f");
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-m 64 -arch=sm_120f"))), "sm_120f");
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("--gpu-name sm_90a -O3"))), "sm_90a");
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-arch compute_90 -m 64"))), "");
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-m 64"))), "");
  // Another note type or owner is not read; a cut-off note reads as none.
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-arch sm_121f", 1000))), "");
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("-arch sm_121f", 2000, "GNU\0"))), "");
  std::string note = tkinfo_note("-arch sm_121f");
  EXPECT_EQ(notes_build_arch(as_span(note.substr(0, note.size() - 40))), "");
  // A note of another owner first, then NVIDIA's.
  EXPECT_EQ(notes_build_arch(as_span(tkinfo_note("x", 2000, std::string_view("GNU\0", 4)) +
                                     tkinfo_note("-arch sm_121f"))),
            "sm_121f");
}

TEST(BuildNote, FamilyOnlyForTheCubinsOwnSmAndNeverWithA) {
  CubinInfo info;
  info.sm = 121;
  info.build_arch = "sm_121f";
  EXPECT_TRUE(info.family_specific());
  info.build_arch = "sm_120f";
  EXPECT_FALSE(info.family_specific());
  info.build_arch = "sm_121f";
  info.arch_specific = true;
  EXPECT_FALSE(info.family_specific());
}

}  // namespace
}  // namespace sparkdoc::elf
