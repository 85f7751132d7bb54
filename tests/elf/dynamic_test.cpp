#include "elf/dynamic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "elf_image.h"
#include "golden.h"
#include "temp_file.h"

namespace sparkdoc::elf {
namespace {

using ::testing::ElementsAre;
using testing::ElfImage;
using testing::ElfImageSpec;
using ::testing::HasSubstr;
using testing::TempFile;

constexpr int64_t kNeeded = 1, kSoname = 14, kRpath = 15, kRunpath = 29;

using sparkdoc::testing::slurp;

ElfImageSpec cuda13_spec(bool is_64, bool big_endian) {
  ElfImageSpec spec;
  spec.is_64 = is_64;
  spec.big_endian = big_endian;
  spec.strings = {{kSoname, "libtorch_cuda.so"},
                  {kNeeded, "libcudart.so.13"},
                  {kNeeded, "libcublas.so.13"},
                  {kRpath, "$ORIGIN/../../nvidia/cu13/lib::$ORIGIN"},
                  {kRunpath, "/usr/local/cuda/lib64"}};
  return spec;
}

void expect_cuda13(const Result<DynamicInfo>& info) {
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->soname, "libtorch_cuda.so");
  EXPECT_THAT(info->needed, ElementsAre("libcudart.so.13", "libcublas.so.13"));
  EXPECT_THAT(info->rpath, ElementsAre("$ORIGIN/../../nvidia/cu13/lib", "$ORIGIN"));
  EXPECT_THAT(info->runpath, ElementsAre("/usr/local/cuda/lib64"));
}

TEST(ReadDynamic, FakeCudartCarriesItsSoname) {
  auto info = read_dynamic(ELF_FAKE_CUDART);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->soname, "libcudart.so.12");
  EXPECT_TRUE(info->rpath.empty());
  EXPECT_TRUE(info->runpath.empty());
}

TEST(ReadDynamic, ConsumerWithRpath) {
  auto info = read_dynamic(ELF_CONSUMER_RPATH);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->soname, "libconsumer_rpath.so");
  auto cudart = std::find(info->needed.begin(), info->needed.end(), "libcudart.so.12");
  auto cufft = std::find(info->needed.begin(), info->needed.end(), "libcufft.so.11");
  ASSERT_NE(cudart, info->needed.end());
  ASSERT_NE(cufft, info->needed.end());
  EXPECT_LT(cudart, cufft) << "DT_NEEDED keeps link order";
  EXPECT_THAT(info->rpath, ElementsAre("$ORIGIN/../lib", "/opt/fake/lib"));
  EXPECT_TRUE(info->runpath.empty());
  // The version the library defines after its soname is recorded as a need, as for CUDA's
  // (only for the library that provides the symbol the consumer calls).
  EXPECT_THAT(info->version_needs,
              ::testing::Contains(VersionNeed{"libcudart.so.12", {"libcudart.so.12"}}));
}

TEST(ReadDynamic, ConsumerWithRunpath) {
  auto info = read_dynamic(ELF_CONSUMER_RUNPATH);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_THAT(info->needed, ::testing::Contains("libcudart.so.12"));
  EXPECT_TRUE(info->rpath.empty());
  EXPECT_THAT(info->runpath, ElementsAre("$ORIGIN", "/usr/local/cuda/lib64"));
}

TEST(ReadDynamic, FileAndMemoryAgree) {
  std::string bytes = slurp(ELF_CONSUMER_RPATH);
  auto from_file = read_dynamic(ELF_CONSUMER_RPATH);
  auto from_memory = parse_dynamic(bytes.data(), bytes.size());
  ASSERT_TRUE(from_file);
  ASSERT_TRUE(from_memory);
  EXPECT_EQ(*from_file, *from_memory);
}

TEST(ParseDynamic, EveryClassAndByteOrder) {
  for (bool is_64 : {false, true}) {
    for (bool big_endian : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "64-bit " << is_64 << " big-endian " << big_endian);
      std::string image = ElfImage::build(cuda13_spec(is_64, big_endian));
      expect_cuda13(parse_dynamic(image.data(), image.size()));
      TempFile file(image);
      expect_cuda13(read_dynamic(file.path()));
    }
  }
}

TEST(ParseDynamic, WithoutSectionHeadersReadsPtDynamic) {
  for (bool is_64 : {false, true}) {
    for (bool big_endian : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "64-bit " << is_64 << " big-endian " << big_endian);
      ElfImageSpec spec = cuda13_spec(is_64, big_endian);
      spec.with_section_headers = false;
      std::string image = ElfImage::build(spec);
      expect_cuda13(parse_dynamic(image.data(), image.size()));
    }
  }
}

TEST(ParseDynamic, NoDynamicSectionIsEmptyNotAnError) {
  for (bool with_sections : {false, true}) {
    ElfImageSpec spec = cuda13_spec(true, false);
    spec.with_dynamic = false;
    spec.with_section_headers = with_sections;
    std::string image = ElfImage::build(spec);
    auto info = parse_dynamic(image.data(), image.size());
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(*info, DynamicInfo{});
  }
}

TEST(ParseDynamic, StringOffsetOutsideTableIsAnError) {
  for (bool with_sections : {false, true}) {
    ElfImageSpec spec;
    spec.strings = {{kNeeded, "libcudart.so.13"}};
    spec.with_section_headers = with_sections;
    std::string image = ElfImage::build(spec);
    // The first dynamic entry's value: 64 (Ehdr) + 2 * 56 (Phdr) + align8(17 bytes of dynstr)
    // + 8 (d_tag).
    const size_t value_at = 64 + 2 * 56 + 24 + 8;
    ASSERT_EQ(image[value_at], 1) << "layout changed";
    image[value_at + 2] = 0x7f;
    auto info = parse_dynamic(image.data(), image.size());
    ASSERT_FALSE(info);
    EXPECT_THAT(info.error().message, HasSubstr("DT_NEEDED"));
    EXPECT_THAT(info.error().message, HasSubstr("outside"));
  }
}

TEST(ReadDynamic, MissingFileIsAbsentAndNamed) {
  auto info = read_dynamic("/nonexistent/libcudart.so.13");
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().why, Why::kAbsent);
  EXPECT_THAT(info.error().message, HasSubstr("/nonexistent/libcudart.so.13"));
}

TEST(ReadDynamic, NonElfInputsAreErrorsNamingTheFile) {
  const std::string inputs[] = {
      "",
      "\x7f",
      "\x7f"
      "EL",
      "\x7f"
      "ELF",
      "#!/bin/sh\necho not a library\n",
      "!<arch>\nfoo.o/          0           0     0     644     4         `\nabcd",
      std::string(64, '\0'),
      std::string(4096, '\xff'),
  };
  for (const std::string& bytes : inputs) {
    TempFile file(bytes);
    auto info = read_dynamic(file.path());
    ASSERT_FALSE(info) << "input of " << bytes.size() << " bytes";
    EXPECT_THAT(info.error().message, HasSubstr(file.path()));
    EXPECT_FALSE(parse_dynamic(bytes.data(), bytes.size()));
  }
}

TEST(ReadDynamic, DirectoryIsAnError) {
  auto info = read_dynamic(::testing::TempDir());
  EXPECT_FALSE(info);
}

// Every prefix of a real library and of a hand-built big-endian ELF32 image: each gives a
// value or an error, never a crash (the sanitizer preset turns a bad read into a failure).
TEST(ReadDynamic, TruncatedFilesNeverCrash) {
  const std::string images[] = {slurp(ELF_CONSUMER_RUNPATH),
                                ElfImage::build(cuda13_spec(false, true))};
  for (const std::string& full : images) {
    ASSERT_FALSE(full.empty());
    const size_t step = std::max<size_t>(1, full.size() / 300);
    for (size_t size = 0; size < full.size(); size += step) {
      std::string cut = full.substr(0, size);
      auto info = parse_dynamic(cut.data(), cut.size());
      if (size < 16) {
        EXPECT_FALSE(info);
      }
    }
    TempFile file(full.substr(0, full.size() / 2));
    auto half = read_dynamic(file.path());
    if (!half) {
      EXPECT_THAT(half.error().message, HasSubstr(file.path()));
    }
  }
}

TEST(ParseDynamic, CorruptedBytesNeverCrash) {
  const std::string originals[] = {slurp(ELF_CONSUMER_RPATH),
                                   ElfImage::build(cuda13_spec(true, true)),
                                   ElfImage::build(cuda13_spec(false, false))};
  std::mt19937 rng(20261129);
  for (const std::string& original : originals) {
    ASSERT_FALSE(original.empty());
    for (int round = 0; round < 400; ++round) {
      std::string bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips; ++i) {
        // Bias towards the headers, where a bad value reaches the most code.
        size_t at = rng() % (round % 2 == 0 ? std::min<size_t>(bytes.size(), 512) : bytes.size());
        bytes[at] = static_cast<char>(rng());
      }
      auto info = parse_dynamic(bytes.data(), bytes.size());
      (void)info;
    }
  }
}

TEST(ReadDynamic, LiveTestExecutable) {
  auto info = read_dynamic("/proc/self/exe");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_FALSE(info->needed.empty());
}

}  // namespace
}  // namespace sparkdoc::elf
