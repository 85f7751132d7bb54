#include "elf/fatbin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "fatbin_image.h"
#include "temp_file.h"

namespace sparkdoc::elf {
namespace {

using testing::as_bytes;
using testing::build_container;
using testing::build_cubin;
using testing::build_host_elf;
using testing::compat_records;
using testing::cubin_entry;
using testing::CubinSpec;
using testing::EntrySpec;
using ::testing::HasSubstr;
using testing::HostSection;
using testing::ptx_entry;
using testing::put_le;
using testing::TempFile;

Result<GpuCode> parse(const std::string& bytes, uint64_t base = 0) {
  return parse_fatbin_section(as_bytes(bytes), FatbinSection::kFatbinFile, base);
}

TEST(ParseFatbinSection, ReadsEveryHeaderField) {
  EntrySpec elf = cubin_entry(121, 'a');
  elf.flags |= kFatbinFlagCompatCopy;
  elf.options = std::string(1, '\0') + compat_records(1);
  EntrySpec ptx = ptx_entry(120, 'f');
  ptx.options = std::string("--compile-only  ") + '\0';
  EntrySpec lto;
  lto.kind = 8;
  lto.arch = 121;
  lto.version_major = 1;
  lto.version_minor = 65;
  lto.flags = 0x18011;
  lto.payload = std::string(24, 'L');
  lto.compressed_size = 24;
  lto.uncompressed_size = 40;
  lto.options = "-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 ";
  EntrySpec unknown;
  unknown.kind = 0x40;
  unknown.payload = "????????";
  const std::string blob = build_container({elf, ptx, lto, unknown});

  auto code = parse(blob, 0x1000);
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->file_kind, GpuFileKind::kFatbin);
  ASSERT_EQ(code->containers.size(), 1u);
  const FatbinContainer& container = code->containers[0];
  EXPECT_EQ(container.offset, 0x1000u);
  EXPECT_EQ(container.version, 1);
  EXPECT_EQ(container.header_size_bytes, 16);
  EXPECT_EQ(container.fat_size_bytes, blob.size() - 16);
  EXPECT_EQ(container.first_entry, 0u);
  EXPECT_EQ(container.entry_count, 4u);
  ASSERT_EQ(code->entries.size(), 4u);

  const FatbinEntry& e = code->entries[0];
  EXPECT_EQ(e.kind, EntryKind::kElf);
  EXPECT_EQ(e.kind_code, 2);
  EXPECT_EQ(e.section, FatbinSection::kFatbinFile);
  EXPECT_EQ(e.container_index, 0u);
  EXPECT_EQ(e.header_offset, 0x1010u);
  EXPECT_EQ(e.header_size_bytes % 8, 0u);
  EXPECT_GT(e.header_size_bytes, 64u);
  EXPECT_EQ(e.payload_offset, e.header_offset + e.header_size_bytes);
  EXPECT_EQ(blob.substr(e.payload_offset - 0x1000, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(e.arch, 121u);
  EXPECT_EQ(e.version_major, 1);
  EXPECT_EQ(e.version_minor, 8);
  EXPECT_TRUE(e.arch_specific);
  EXPECT_FALSE(e.family_specific);
  EXPECT_EQ(e.compression, Compression::kNone);
  EXPECT_EQ(e.header_compat_arch_specific, 1u);
  ASSERT_TRUE(e.cubin.has_value());
  EXPECT_EQ(e.cubin->sm, 121u);
  EXPECT_TRUE(e.cubin->arch_specific);
  EXPECT_TRUE(e.elf_arch_specific());
  EXPECT_EQ(e.elf_sm(), 121u);
  EXPECT_TRUE(e.ptxas_options.empty());

  const FatbinEntry& p = code->entries[1];
  EXPECT_EQ(p.kind, EntryKind::kPtx);
  EXPECT_EQ(p.arch, 120u);
  EXPECT_EQ(p.version_major, 9);
  EXPECT_EQ(p.version_minor, 0);
  EXPECT_TRUE(p.family_specific);
  EXPECT_FALSE(p.arch_specific);
  EXPECT_EQ(p.ptxas_options, "--compile-only  ");
  EXPECT_FALSE(p.cubin.has_value());
  EXPECT_EQ(p.header_offset, e.payload_offset + e.payload_size_bytes);

  const FatbinEntry& l = code->entries[2];
  EXPECT_EQ(l.kind, EntryKind::kLtoIr);
  EXPECT_EQ(l.compression, Compression::kZstd);
  EXPECT_EQ(l.compressed_size_bytes, 24u);
  EXPECT_EQ(l.uncompressed_size_bytes, 40u);
  EXPECT_EQ(l.ptxas_options, "-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 ");

  EXPECT_EQ(code->entries[3].kind, EntryKind::kUnknown);
  EXPECT_EQ(code->entries[3].kind_code, 0x40);
}

TEST(ParseFatbinSection, CompressedPayloadsAreNotRead) {
  EntrySpec zstd = cubin_entry(90, 'a');
  zstd.flags |= kFatbinFlagZstd;
  zstd.payload = "\x28\xb5\x2f\xfd not really a frame";
  zstd.compressed_size = static_cast<uint32_t>(zstd.payload.size());
  zstd.uncompressed_size = 4096;
  EntrySpec lz4 = cubin_entry(120, 'f');
  lz4.flags |= kFatbinFlagLz4;
  lz4.payload = "garbage";
  lz4.compressed_size = 7;
  lz4.uncompressed_size = 99;
  auto code = parse(build_container({zstd, lz4}));
  ASSERT_TRUE(code) << code.error().message;
  ASSERT_EQ(code->entries.size(), 2u);
  EXPECT_EQ(code->entries[0].compression, Compression::kZstd);
  EXPECT_FALSE(code->entries[0].cubin.has_value());
  EXPECT_TRUE(code->entries[0].elf_arch_specific());
  EXPECT_EQ(code->entries[1].compression, Compression::kLz4);
  EXPECT_EQ(code->entries[1].compressed_size_bytes, 7u);
  EXPECT_EQ(code->entries[1].uncompressed_size_bytes, 99u);
  EXPECT_FALSE(code->entries[1].elf_arch_specific()) << "'f' never names an ELF entry 'a'";
  EXPECT_EQ(code->entries[1].elf_sm(), 120u);
}

TEST(ParseFatbinSection, CompressedCubinTakesArchSpecificFromTheHeaderCompatCopy) {
  // A compressed SM >= 100 cubin whose header lacks 0x100000 but whose compat copy says 'a'.
  EntrySpec entry = cubin_entry(121, 'a');
  entry.flags = 0x11 | kFatbinFlagZstd | kFatbinFlagCompatCopy;
  entry.options = std::string(1, '\0') + compat_records(1);
  entry.compressed_size = 8;
  entry.uncompressed_size = 64;
  entry.payload = "zzzzzzzz";
  auto code = parse(build_container({entry}));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_FALSE(code->entries[0].arch_specific);
  EXPECT_EQ(code->entries[0].header_compat_arch_specific, 1u);
  EXPECT_TRUE(code->entries[0].elf_arch_specific());
}

TEST(ParseFatbinSection, ElfNameFollowsTheCubinNotTheHeader) {
  // cuobjdump 13.0 patch experiments (reference §2.4): the ELF name follows the cubin.
  EntrySpec cleared = cubin_entry(121, 'a');
  cleared.flags &= ~kFatbinFlagArchSpecific;
  EntrySpec forged = cubin_entry(90, ' ');
  forged.flags |= kFatbinFlagArchSpecific;
  auto code = parse(build_container({cleared, forged}));
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_TRUE(code->entries[0].elf_arch_specific());
  EXPECT_FALSE(code->entries[1].elf_arch_specific());
  EXPECT_TRUE(code->entries[1].arch_specific);
}

TEST(ParseFatbinSection, WalksContainersAtEightByteSteps) {
  const std::string first = build_container({cubin_entry(90, ' ')});
  const std::string second = build_container({ptx_entry(90, ' '), cubin_entry(120, ' ')});
  // 24 bytes of zeros between the containers, and a magic at a 4-byte offset, which is no
  // container start.
  std::string gap(24, '\0');
  put_le(gap, 4, kFatbinMagic, 4);
  const std::string blob = first + gap + second + std::string(8, '\0');
  auto code = parse(blob);
  ASSERT_TRUE(code) << code.error().message;
  ASSERT_EQ(code->containers.size(), 2u);
  EXPECT_EQ(code->containers[1].offset, first.size() + gap.size());
  EXPECT_EQ(code->containers[1].first_entry, 1u);
  EXPECT_EQ(code->containers[1].entry_count, 2u);
  ASSERT_EQ(code->entries.size(), 3u);
  EXPECT_EQ(code->entries[2].container_index, 1u);
  EXPECT_EQ(code->entries[2].arch, 120u);
}

TEST(ParseFatbinSection, ScanFollowsFileAlignmentNotSectionStart) {
  // libcufft.so.12 keeps its containers in .ldata, which starts 4 bytes past an 8-byte
  // boundary; the containers themselves sit 8-aligned in the file.
  const std::string container = build_container({ptx_entry(75, ' ')});
  auto code = parse(std::string(4, '\0') + container, 0x81d874 + 0x7a8);
  ASSERT_TRUE(code) << code.error().message;
  ASSERT_EQ(code->containers.size(), 1u);
  EXPECT_EQ(code->containers[0].offset, 0x81e020u);
}

TEST(ParseFatbinSection, BytesWithoutContainersGiveNothing) {
  for (const std::string& bytes : {std::string(), std::string(3, '\xba'), std::string(4096, 'x')}) {
    auto code = parse(bytes);
    ASSERT_TRUE(code) << code.error().message;
    EXPECT_TRUE(code->containers.empty());
    EXPECT_TRUE(code->entries.empty());
  }
  auto null = parse_fatbin_section(nullptr, 100);
  ASSERT_TRUE(null);
  EXPECT_TRUE(null->entries.empty());
}

TEST(ParseFatbinSection, MalformedContainersAreErrorsNamingTheOffset) {
  const std::string good = build_container({cubin_entry(121, 'a'), ptx_entry(121, ' ')});
  const std::string lead(16, '\0');  // the container starts at 0x10; base 0x100 makes it 0x110

  std::string too_long = lead + good;
  put_le(too_long, 16 + 8, good.size(), 8);
  auto code = parse(too_long, 0x100);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("container at offset 0x110"));

  std::string small_header = lead + good;
  put_le(small_header, 16 + 6, 8, 2);
  code = parse(small_header, 0x100);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("0x110"));

  code = parse(lead + good.substr(0, 10), 0x100);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("container header at offset 0x110 cut off"));

  std::string zero_header = lead + good;
  put_le(zero_header, 16 + 16 + 4, 0, 4);
  code = parse(zero_header, 0x100);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("entry at offset 0x120: header size 0"));

  std::string huge_payload = lead + good;
  put_le(huge_payload, 16 + 16 + 8, 0xfffffffffffffff8ull, 8);
  code = parse(huge_payload, 0x100);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("entry at offset 0x120"));

  // Entries that do not fill the container exactly: the last header is cut off.
  std::string short_tail = good;
  put_le(short_tail, 8, good.size() - 16 + 8, 8);
  short_tail += std::string(8, '\0');
  code = parse(short_tail);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("cut off"));
}

TEST(ParseFatbinSection, MalformedEntriesAreErrors) {
  EntrySpec compressed = ptx_entry(90, ' ');
  compressed.flags |= kFatbinFlagZstd;
  compressed.compressed_size = 4096;
  auto code = parse(build_container({compressed}));
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("compressed size 4096"));

  std::string options = build_container({ptx_entry(90, ' ')});
  put_le(options, 16 + 0x14, 0x4000, 4);
  code = parse(options);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("options descriptor"));

  options = build_container({ptx_entry(90, ' ')});
  put_le(options, 16 + 0x44, 0x10000, 4);
  code = parse(options);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("options"));

  EntrySpec not_elf = cubin_entry(90, ' ');
  not_elf.payload = std::string(64, 'x');
  code = parse(build_container({not_elf}), 0x2000);
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("cubin at offset 0x2050"));
}

TEST(ParseFatbinSection, NoTruncationOrCorruptionCrashes) {
  const std::string blob = build_container({cubin_entry(90, 'a'), ptx_entry(90, ' ')}) +
                           build_container({cubin_entry(121, 'a'), cubin_entry(120, 'f')});
  for (size_t size = 0; size < blob.size(); ++size) {
    auto code = parse(blob.substr(0, size));
    if (code) {
      EXPECT_LE(code->containers.size(), 1u) << size;
    }
  }
  for (size_t at = 0; at < blob.size(); ++at) {
    for (char value : {'\0', '\x7f', '\xff'}) {
      std::string corrupt = blob;
      corrupt[at] = value;
      auto code = parse(corrupt);
      if (code) {
        for (const FatbinEntry& entry : code->entries) {
          EXPECT_LE(entry.payload_offset + entry.payload_size_bytes, corrupt.size());
        }
      }
    }
  }
}

TEST(ParseGpuCode, HostElfSectionsAndFileKinds) {
  const std::string fatbin = build_container({cubin_entry(90, ' '), ptx_entry(90, ' ')});
  const std::string relfatbin = build_container({ptx_entry(121, 'a')});
  const std::string linked =
      build_host_elf({{".rodata", "text"}, {".nv_fatbin", fatbin}, {"__nv_relfatbin", relfatbin}});
  auto code = parse_gpu_code(as_bytes(linked), "t.so");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->file_kind, GpuFileKind::kLinkedElf);
  ASSERT_EQ(code->containers.size(), 2u);
  EXPECT_EQ(code->containers[0].section, FatbinSection::kNvFatbin);
  EXPECT_EQ(code->containers[1].section, FatbinSection::kNvRelfatbin);
  EXPECT_EQ(code->containers[1].first_entry, 2u);
  ASSERT_EQ(code->entries.size(), 3u);
  EXPECT_EQ(code->entries[2].section, FatbinSection::kNvRelfatbin);
  EXPECT_EQ(code->entries[2].container_index, 1u);
  EXPECT_EQ(linked.substr(code->containers[0].offset, fatbin.size()), fatbin);
  EXPECT_EQ(linked.substr(code->entries[2].header_offset, 64), relfatbin.substr(16, 64));

  const std::string object = build_host_elf({{"__nv_relfatbin", relfatbin}}, 1);
  code = parse_gpu_code(as_bytes(object), "t.o");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->file_kind, GpuFileKind::kRelocatableElf);
  ASSERT_EQ(code->entries.size(), 1u);

  const std::string plain = build_host_elf({{".text", "code"}});
  code = parse_gpu_code(as_bytes(plain), "libplain.so");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_TRUE(code->containers.empty());

  // A debug-info file keeps the section header with SHT_NOBITS and no bytes.
  const std::string debug = build_host_elf({{".nv_fatbin", fatbin, 8}});
  code = parse_gpu_code(as_bytes(debug), "t.so.debug");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_TRUE(code->containers.empty());
}

TEST(ParseGpuCode, BareFatbinAndCubin) {
  const std::string fatbin = build_container({cubin_entry(120, 'f')});
  auto code = parse_gpu_code(as_bytes(fatbin), "t.fatbin");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->file_kind, GpuFileKind::kFatbin);
  ASSERT_EQ(code->entries.size(), 1u);
  EXPECT_EQ(code->entries[0].section, FatbinSection::kFatbinFile);

  CubinSpec spec;
  spec.compat = compat_records(1);
  const std::string cubin = build_cubin(spec);
  code = parse_gpu_code(as_bytes(cubin), "t.cubin");
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->file_kind, GpuFileKind::kCubin);
  EXPECT_TRUE(code->containers.empty());
  ASSERT_EQ(code->entries.size(), 1u);
  const FatbinEntry& entry = code->entries[0];
  EXPECT_EQ(entry.section, FatbinSection::kCubinFile);
  EXPECT_EQ(entry.container_index, kNoContainer);
  EXPECT_EQ(entry.kind, EntryKind::kElf);
  EXPECT_EQ(entry.arch, 121u);
  EXPECT_TRUE(entry.arch_specific);
  EXPECT_TRUE(entry.elf_arch_specific());
}

TEST(ParseGpuCode, ErrorsNameTheFile) {
  auto code = parse_gpu_code(as_bytes("#!/bin/sh\necho hi\n"), "run.sh");
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("run.sh: not an ELF, fatbin or cubin file"));

  std::string broken = build_container({cubin_entry(90, ' ')});
  put_le(broken, 8, 1 << 20, 8);
  const std::string host = build_host_elf({{".nv_fatbin", broken}});
  code = parse_gpu_code(as_bytes(host), "libbroken.so");
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("libbroken.so: .nv_fatbin: container at offset 0x"));

  // A section table that puts .nv_fatbin beyond the end of the file.
  std::string beyond = build_host_elf({{".nv_fatbin", build_container({ptx_entry(90, ' ')})}});
  const uint64_t shoff = beyond.size() - 3 * 64;
  put_le(beyond, shoff + 64 + 0x20, 1 << 30, 8);
  code = parse_gpu_code(as_bytes(beyond), "libbeyond.so");
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("libbeyond.so: section .nv_fatbin"));

  CubinSpec spec;
  std::string cubin = build_cubin(spec);
  cubin.resize(cubin.size() - 8);
  code = parse_gpu_code(as_bytes(cubin), "t.cubin");
  ASSERT_FALSE(code);
  EXPECT_THAT(code.error().message, HasSubstr("t.cubin: "));
}

TEST(ReadGpuCode, ReadsFilesAndReportsWhyNot) {
  const std::string fatbin = build_container({cubin_entry(90, ' '), ptx_entry(90, ' ')});
  const TempFile file(build_host_elf({{".nv_fatbin", fatbin}}));
  auto code = read_gpu_code(file.path());
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(code->entries.size(), 2u);
  const std::string image = build_host_elf({{".nv_fatbin", fatbin}});
  auto in_memory = parse_gpu_code(as_bytes(image), "x");
  ASSERT_TRUE(in_memory) << in_memory.error().message;
  EXPECT_EQ(*code, *in_memory);

  auto missing = read_gpu_code("/nonexistent/libtorch_cuda.so");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);

  const TempFile empty("");
  auto nothing = read_gpu_code(empty.path());
  ASSERT_FALSE(nothing);
  EXPECT_THAT(nothing.error().message, HasSubstr("not an ELF"));

  EXPECT_FALSE(read_gpu_code(::testing::TempDir()));
}

TEST(ReadGpuCode, PiecewiseFileReadsEqualTheInMemoryParse) {
  // Over 64 KiB of section, so that the file is read header by header through its windows:
  // big compressed payloads between headers, uncompressed cubins whose section tables sit
  // apart from their headers, and a cubin larger than a window.
  CubinSpec big;
  big.compat = compat_records(1);
  EntrySpec large_cubin = cubin_entry(121, 'a');
  std::string padded = build_cubin(big);
  large_cubin.payload = padded + std::string(9000, '\x5a');
  std::vector<EntrySpec> entries;
  for (int i = 0; i < 12; ++i) {
    EntrySpec zstd = cubin_entry(100 + static_cast<uint32_t>(i % 3) * 10, 'a');
    zstd.flags |= kFatbinFlagZstd | kFatbinFlagCompatCopy;
    zstd.options = std::string(1, '\0') + compat_records(1);
    zstd.payload = std::string(7000 + static_cast<size_t>(i) * 13, 'z');
    zstd.compressed_size = static_cast<uint32_t>(zstd.payload.size() - 5);
    zstd.uncompressed_size = 3 * zstd.payload.size();
    entries.push_back(zstd);
    entries.push_back(cubin_entry(90, i % 2 == 0 ? 'a' : ' '));
    if (i % 4 == 0) entries.push_back(large_cubin);
  }
  std::string section;
  for (size_t i = 0; i < entries.size(); i += 5) {
    const size_t n = std::min<size_t>(5, entries.size() - i);
    section += build_container(
        std::vector<EntrySpec>(entries.begin() + static_cast<std::ptrdiff_t>(i),
                               entries.begin() + static_cast<std::ptrdiff_t>(i + n)));
    section += std::string(16, '\0');
  }
  ASSERT_GT(section.size(), 64u * 1024);
  const std::string image = build_host_elf({{".nv_fatbin", section}, {".other", "x"}});
  const TempFile file(image);
  auto from_file = read_gpu_code(file.path());
  ASSERT_TRUE(from_file) << from_file.error().message;
  auto in_memory = parse_gpu_code(as_bytes(image), file.path());
  ASSERT_TRUE(in_memory) << in_memory.error().message;
  EXPECT_EQ(from_file->entries.size(), entries.size());
  EXPECT_EQ(*from_file, *in_memory);
  for (const FatbinEntry& entry : from_file->entries) {
    if (entry.cubin) {
      EXPECT_EQ(entry.cubin->arch_specific, entry.arch_specific) << entry.header_offset;
    }
  }
}

TEST(ReadGpuCode, FixturesReadFromFileEqualTheInMemoryParse) {
  for (const char* name : {"gencode.so", "zstd.so", "lz4.so", "rdc.o", "rdc.so", "family.fatbin",
                           "sm120a.fatbin", "ptx90.fatbin", "sm121a.cubin"}) {
    const std::string path = std::string(SPARKDOC_FIXTURES) + "/elf/" + name;
    std::ifstream in(path, std::ios::binary);
    const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto from_file = read_gpu_code(path);
    auto in_memory = parse_gpu_code(as_bytes(image), path);
    ASSERT_TRUE(from_file && in_memory) << name;
    EXPECT_EQ(*from_file, *in_memory) << name;
  }
}

std::vector<std::byte> to_bytes(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

TEST(DecompressLz4Block, DecodesLiteralsMatchesAndLongLengths) {
  // "abc", then a 9-byte match at distance 3 (overlapping its own output), then "xyz".
  const std::string block = std::string(
      "\x35"
      "abc"
      "\x03\x00"
      "\x30"
      "xyz",
      10);
  auto out = decompress_lz4_block(as_bytes(block), 15);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, to_bytes("abcabcabcabcxyz"));

  // 20 literals: 15 in the token plus one extension byte of 5.
  const std::string literals = std::string("\xf0\x05", 2) + std::string(20, 'q');
  out = decompress_lz4_block(as_bytes(literals), 20);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, to_bytes(std::string(20, 'q')));

  // One literal, then a match of 15 + 255 + 10 + 4 = 284 bytes at distance 1, then an empty
  // final sequence.
  const std::string run = std::string(
      "\x1f"
      "a"
      "\x01\x00"
      "\xff\x0a"
      "\x00",
      7);
  out = decompress_lz4_block(as_bytes(run), 285);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, to_bytes(std::string(285, 'a')));

  out = decompress_lz4_block({}, 0);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->empty());
}

TEST(DecompressLz4Block, RefusesMalformedBlocks) {
  const std::string block = std::string(
      "\x35"
      "abc"
      "\x03\x00"
      "\x30"
      "xyz",
      10);
  EXPECT_FALSE(decompress_lz4_block(as_bytes(block), 14)) << "output longer than stated";
  EXPECT_FALSE(decompress_lz4_block(as_bytes(block), 16)) << "output shorter than stated";
  for (size_t size = 0; size < block.size(); ++size) {
    EXPECT_FALSE(decompress_lz4_block(as_bytes(block).first(size), 15)) << size;
  }
  const std::string zero_distance = std::string(
      "\x10"
      "a"
      "\x00\x00"
      "\x00",
      5);
  EXPECT_FALSE(decompress_lz4_block(as_bytes(zero_distance), 6));
  const std::string far = std::string(
      "\x10"
      "a"
      "\x02\x00"
      "\x00",
      5);
  EXPECT_FALSE(decompress_lz4_block(as_bytes(far), 6));
  const std::string cut_length = std::string("\xf0\xff\xff", 3);
  EXPECT_FALSE(decompress_lz4_block(as_bytes(cut_length), 600));
  auto forged = decompress_lz4_block(as_bytes(block), 1ull << 40);
  ASSERT_FALSE(forged);
  EXPECT_THAT(forged.error().message, HasSubstr("cannot decode"));
}

}  // namespace
}  // namespace sparkdoc::elf
