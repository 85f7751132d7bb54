// elf/guards: the sm120-only guard found in the cubins nvcc 13.0 built from the guard's shape
// (tests/fixtures/elf/make_fixtures.sh: guard*.so), uncompressed, zstd and LZ4; never in a 12.0f
// family build or a plain kernel; and forged or damaged payloads refused, not read past.
#include "elf/guards.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "elf/fatbin.h"
#include "golden.h"

namespace sparkdoc::elf {
namespace {

using audit::ArchVariant;
using audit::GpuTarget;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string fixture_file(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/elf/" + name;
}

// Every container's guarded targets, read from the file as the audit reads it.
std::vector<GpuTarget> guarded_in(const std::string& name) {
  GuardScanner scanner(fixture_file(name));
  std::vector<GpuTarget> out;
  auto kind = scan_gpu_code(fixture_file(name),
                            [&](const FatbinContainer*, std::span<const FatbinEntry> entries) {
                              auto found = scanner.sm120_only_targets(entries);
                              ASSERT_TRUE(found) << found.error().message;
                              out.insert(out.end(), found->begin(), found->end());
                            });
  EXPECT_TRUE(kind) << kind.error().message;
  return out;
}

std::vector<std::byte> image_of(const std::string& name) {
  const std::string text = sparkdoc::testing::slurp(fixture_file(name));
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// The one entry of `code` the guard could be in.
const FatbinEntry& candidate(const GpuCode& code) {
  for (const FatbinEntry& e : code.entries) {
    if (may_hold_sm120_only_guard(e)) return e;
  }
  ADD_FAILURE() << "no sm_121 cubin";
  return code.entries.front();
}

TEST(Sm120OnlyGuard, FoundInTheSm121CubinWhateverTheCompression) {
  EXPECT_THAT(guarded_in("guard.so"), ElementsAre(GpuTarget{121, ArchVariant::kPlain}));
  EXPECT_THAT(guarded_in("guard-zstd.so"), ElementsAre(GpuTarget{121, ArchVariant::kArchSpecific}));
  EXPECT_THAT(guarded_in("guard-lz4.so"), ElementsAre(GpuTarget{121, ArchVariant::kPlain}));
}

TEST(Sm120OnlyGuard, NeverInAFamilyBuildOrAPlainKernel) {
  EXPECT_THAT(guarded_in("guard-family.so"), IsEmpty());  // sm_120f: the kernel itself
  EXPECT_THAT(guarded_in("gencode.so"), IsEmpty());       // sm_121a of a kernel without a guard
  EXPECT_THAT(guarded_in("lz4.so"), IsEmpty());
  EXPECT_THAT(guarded_in("sm121f.cubin"), IsEmpty());  // a bare cubin, read whole
}

TEST(Sm120OnlyGuard, OnlySm12xCubinsOtherThan120AreCandidates) {
  FatbinEntry e;
  e.kind = EntryKind::kElf;
  for (uint32_t arch : {121u, 129u}) {
    e.arch = arch;
    EXPECT_TRUE(may_hold_sm120_only_guard(e)) << arch;
  }
  for (uint32_t arch : {90u, 100u, 120u, 130u}) {
    e.arch = arch;
    EXPECT_FALSE(may_hold_sm120_only_guard(e)) << arch;
  }
  e.arch = 121;
  e.kind = EntryKind::kPtx;  // PTX is compiled by the driver for the device: __CUDA_ARCH__ 1210
  EXPECT_FALSE(may_hold_sm120_only_guard(e));
}

TEST(Sm120OnlyGuard, InMemoryAsInTheFile) {
  for (const char* name : {"guard.so", "guard-zstd.so", "guard-lz4.so"}) {
    const std::vector<std::byte> image = image_of(name);
    auto code = parse_gpu_code(image, name);
    ASSERT_TRUE(code) << code.error().message;
    auto found = sm120_only_targets(image, code->entries);
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(*found, guarded_in(name)) << name;
    auto payload = entry_payload(image, candidate(*code));
    ASSERT_TRUE(payload) << payload.error().message;
    ASSERT_GE(payload->size(), 4u);  // a whole cubin: an ELF image
    EXPECT_EQ(std::memcmp(payload->data(), "\x7f" "ELF", 4), 0) << name;
  }
}

TEST(Sm120OnlyGuard, DamagedOrForgedPayloadsAreErrors) {
  const std::vector<std::byte> image = image_of("guard-zstd.so");
  auto code = parse_gpu_code(image, "guard-zstd.so");
  ASSERT_TRUE(code);
  const FatbinEntry good = candidate(*code);
  ASSERT_EQ(good.compression, Compression::kZstd);

  FatbinEntry forged = good;
  forged.uncompressed_size_bytes = kMaxCubinBytes + 1;
  auto big = entry_payload(image, forged);
  ASSERT_FALSE(big);
  EXPECT_THAT(big.error().message, HasSubstr("more than a cubin does"));

  forged = good;
  forged.uncompressed_size_bytes += 1;  // the frame says otherwise
  EXPECT_FALSE(entry_payload(image, forged));

  forged = good;
  forged.payload_offset = image.size() - 8;  // runs past the end
  EXPECT_FALSE(entry_payload(image, forged));

  std::vector<std::byte> damaged = image;
  for (uint64_t i = 0; i < 4; ++i) damaged[good.payload_offset + i] = std::byte{0};  // magic gone
  auto bad = entry_payload(damaged, good);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("zstd"));
  EXPECT_FALSE(sm120_only_targets(damaged, code->entries));
}

TEST(Sm120OnlyGuard, AMissingFileIsAnError) {
  GuardScanner scanner(fixture_file("no-such.so"));
  FatbinEntry e;
  e.kind = EntryKind::kElf;
  e.arch = 121;
  std::vector<FatbinEntry> entries = {e};
  EXPECT_FALSE(scanner.sm120_only_targets(entries));
  e.arch = 120;  // no candidate: the file is not opened at all
  entries = {e};
  auto none = scanner.sm120_only_targets(entries);
  ASSERT_TRUE(none);
  EXPECT_THAT(*none, IsEmpty());
}

}  // namespace
}  // namespace sparkdoc::elf
