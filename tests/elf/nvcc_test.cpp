// Fixtures built at test time by the nvcc on PATH, checked against what each build asked for.
// Skipped where nvcc is absent (CI); the committed fixtures carry the same assertions there.
// Builds are kept under the build tree, keyed by their command line, so each is made once even
// though ctest runs every test in its own process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/strings.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "elf/targets.h"
#include "golden.h"
#include "judge.h"

namespace sparkdoc::elf {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr const char* kKernel = R"(__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
)";

constexpr const char* kShared = "-shared -cudart shared -Xcompiler -fPIC ";
constexpr const char* kTargets =
    "-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_120,code=sm_120 "
    "-gencode arch=compute_121a,code=sm_121a -gencode arch=compute_90,code=compute_90";

bool nvcc_on_path() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (std::string_view dir : split(path, ':')) {
    if (dir.empty()) continue;
    if (::access((std::string(dir) + "/nvcc").c_str(), X_OK) == 0) return true;
  }
  return false;
}

using sparkdoc::testing::slurp;

// Builds `output` from kKernel with `arguments`; on failure, the reason with nvcc's log.
// Concurrent test processes each build in their own folder and the first rename wins.
struct Built {
  std::string path;
  std::string error;
};

Built nvcc_build(const std::string& output, const std::string& arguments) {
  const std::string command = "nvcc " + arguments + " -o " + output + " kernel.cu";
  const size_t key = std::hash<std::string>{}(command + kKernel);
  const fs::path root = fs::path(SPARKDOC_BINARY_DIR) / "tests" / "elf" / "nvcc_fixtures";
  const fs::path done = root / std::to_string(key);
  if (fs::exists(done / output)) return {(done / output).string(), ""};

  std::error_code ec;
  const fs::path work = root / (std::to_string(key) + ".tmp." + std::to_string(::getpid()));
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  if (ec) return {"", "cannot create " + work.string() + ": " + ec.message()};
  std::ofstream(work / "kernel.cu") << kKernel;
  const std::string shell = "cd '" + work.string() + "' && " + command + " > nvcc.log 2>&1";
  if (std::system(shell.c_str()) != 0) {
    return {"", command + " failed:\n" + slurp(work / "nvcc.log")};
  }
  fs::rename(work, done, ec);
  if (ec) fs::remove_all(work, ec);
  if (!fs::exists(done / output)) return {"", "no " + output + " after " + command};
  return {(done / output).string(), ""};
}

// The build's GpuCode; empty optional (with a test failure) when nvcc or the reader failed.
std::optional<GpuCode> build_and_read(const std::string& output, const std::string& arguments,
                                      std::string* path = nullptr) {
  const Built built = nvcc_build(output, arguments);
  if (!built.error.empty()) {
    ADD_FAILURE() << built.error;
    return std::nullopt;
  }
  if (path != nullptr) *path = built.path;
  auto code = read_gpu_code(built.path);
  if (!code) {
    ADD_FAILURE() << code.error().message;
    return std::nullopt;
  }
  return *code;
}

std::vector<std::string> names(const GpuCode& code, uint32_t container, EntryKind kind) {
  std::vector<std::string> out;
  for (const FatbinEntry& entry : code.entries) {
    if (entry.container_index != container || entry.kind != kind) continue;
    out.push_back(kind == EntryKind::kPtx ? ptx_listing_arch(entry) : elf_listing_arch(entry));
  }
  return out;
}

TEST(Nvcc, SharedLibraryHasEveryRequestedTarget) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto code = build_and_read("t.so", std::string(kShared) + kTargets);
  ASSERT_TRUE(code);
  EXPECT_EQ(code->file_kind, GpuFileKind::kLinkedElf);
  // The device-link container first (kernel-less cubins per SASS target), then the kernel's.
  ASSERT_EQ(code->containers.size(), 2u);
  EXPECT_THAT(names(*code, 0, EntryKind::kElf),
              UnorderedElementsAre("sm_90a", "sm_120", "sm_121a"));
  EXPECT_THAT(names(*code, 0, EntryKind::kPtx), ElementsAre());
  EXPECT_THAT(names(*code, 1, EntryKind::kElf),
              UnorderedElementsAre("sm_90a", "sm_120", "sm_121a"));
  EXPECT_THAT(names(*code, 1, EntryKind::kPtx), ElementsAre("sm_90"));
  for (const FatbinEntry& entry : code->entries) {
    SCOPED_TRACE(entry.header_offset);
    EXPECT_EQ(entry.section, FatbinSection::kNvFatbin);
    if (entry.kind == EntryKind::kElf) {
      EXPECT_EQ(entry.compression, Compression::kNone) << "nvcc 13 leaves cubins uncompressed";
      ASSERT_TRUE(entry.cubin.has_value());
      EXPECT_EQ(entry.cubin->sm, entry.arch);
      EXPECT_EQ(entry.cubin->arch_specific, entry.arch_specific);
      EXPECT_EQ(entry.cubin->has_code, entry.container_index == 1);
      EXPECT_EQ(entry.version_major, 1);
    } else {
      EXPECT_EQ(entry.kind, EntryKind::kPtx);
      EXPECT_EQ(entry.compression, Compression::kZstd) << "nvcc 13 compresses PTX by default";
      EXPECT_EQ(entry.version_major, 9);
      EXPECT_FALSE(entry.arch_specific);
    }
  }
  const GpuCodeVerdict gb10 = judge(*code, {12, 1});
  EXPECT_EQ(gb10.run, RunVerdict::kSass);
  EXPECT_TRUE(gb10.nvfp4);
  EXPECT_EQ(judge(*code, {10, 0}).run, RunVerdict::kPtxJitOnly);
}

TEST(Nvcc, CompressAllKeepsTheListing) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto plain = build_and_read("t.so", std::string(kShared) + kTargets);
  auto zstd = build_and_read("t.so", std::string(kShared) + "-Xfatbin -compress-all " + kTargets);
  ASSERT_TRUE(plain && zstd);
  for (const FatbinEntry& entry : zstd->entries) {
    EXPECT_EQ(entry.compression, Compression::kZstd);
    EXPECT_FALSE(entry.cubin.has_value());
  }
  EXPECT_EQ(list_elf_and_ptx(*zstd, "t.so"), list_elf_and_ptx(*plain, "t.so"));
  EXPECT_EQ(judge(*zstd, {12, 1}), judge(*plain, {12, 1}));
}

TEST(Nvcc, Lz4CubinsDecodeToTheUncompressedOnes) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto plain = build_and_read("t.so", std::string(kShared) + kTargets);
  std::string path;
  auto lz4 = build_and_read(
      "t.so", std::string(kShared) + "-Xfatbin -compress-all --compress-mode=speed " + kTargets,
      &path);
  ASSERT_TRUE(plain && lz4);
  ASSERT_EQ(lz4->entries.size(), plain->entries.size());
  const std::string file = slurp(path);
  const auto image = std::as_bytes(std::span(file.data(), file.size()));
  for (size_t i = 0; i < lz4->entries.size(); ++i) {
    const FatbinEntry& entry = lz4->entries[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(entry.compression, Compression::kLz4);
    auto decoded =
        decompress_lz4_block(image.subspan(entry.payload_offset, entry.compressed_size_bytes),
                             entry.uncompressed_size_bytes);
    ASSERT_TRUE(decoded) << decoded.error().message;
    if (entry.kind != EntryKind::kElf) continue;
    auto cubin = inspect_cubin(*decoded);
    ASSERT_TRUE(cubin) << cubin.error().message;
    ASSERT_TRUE(plain->entries[i].cubin.has_value());
    EXPECT_EQ(*cubin, *plain->entries[i].cubin);
  }
  EXPECT_EQ(list_elf_and_ptx(*lz4, "t.so"), list_elf_and_ptx(*plain, "t.so"));
}

TEST(Nvcc, FamilyTargetsShowInHeadersOnly) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto code = build_and_read(
      "f.fatbin",
      "-fatbin -gencode arch=compute_120f,code=sm_120f -gencode arch=compute_121f,code=sm_121f "
      "-gencode arch=compute_120f,code=compute_120f -gencode arch=compute_121,code=lto_121");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->file_kind, GpuFileKind::kFatbin);
  EXPECT_THAT(names(*code, 0, EntryKind::kElf), UnorderedElementsAre("sm_120", "sm_121"));
  EXPECT_THAT(names(*code, 0, EntryKind::kPtx), ElementsAre("sm_120f"));
  EXPECT_THAT(names(*code, 0, EntryKind::kLtoIr), ElementsAre("sm_121"));
  for (const FatbinEntry& entry : code->entries) {
    if (entry.kind == EntryKind::kLtoIr) continue;
    EXPECT_TRUE(entry.family_specific);
    EXPECT_EQ(entry_target(entry).variant, ArchVariant::kFamilySpecific);
    if (entry.cubin) {
      EXPECT_EQ(entry.cubin->compat_arch_specific, 0u);
    }
  }
  const GpuCodeVerdict gb10 = judge(*code, {12, 1});
  EXPECT_EQ(gb10.run, RunVerdict::kSass);
  EXPECT_TRUE(gb10.nvfp4);
  EXPECT_EQ(judge(*code, {12, 0}).run, RunVerdict::kSass);
}

TEST(Nvcc, RelocatableObjectCarriesRelfatbin) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto code = build_and_read(
      "r.o",
      "-rdc=true -c -gencode arch=compute_90a,code=sm_90a "
      "-gencode arch=compute_121a,code=sm_121a -gencode arch=compute_90,code=compute_90");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->file_kind, GpuFileKind::kRelocatableElf);
  ASSERT_FALSE(code->entries.empty());
  for (const FatbinEntry& entry : code->entries) {
    EXPECT_EQ(entry.section, FatbinSection::kNvRelfatbin);
    EXPECT_TRUE(cuobjdump_lists(*code, entry));
    if (entry.kind == EntryKind::kPtx) {
      EXPECT_EQ(trim(entry.ptxas_options), "--compile-only");
    }
  }
  EXPECT_THAT(names(*code, 0, EntryKind::kElf), UnorderedElementsAre("sm_90a", "sm_121a"));
  EXPECT_THAT(names(*code, 0, EntryKind::kPtx), ElementsAre("sm_90"));
}

TEST(Nvcc, RdcSharedLibraryListsOnlyNvFatbin) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  auto code = build_and_read("r.so", std::string(kShared) +
                                         "-rdc=true -gencode arch=compute_90a,code=sm_90a "
                                         "-gencode arch=compute_90,code=compute_90");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->file_kind, GpuFileKind::kLinkedElf);
  bool saw_relfatbin_ptx = false;
  for (const FatbinEntry& entry : code->entries) {
    if (entry.section == FatbinSection::kNvFatbin) {
      EXPECT_EQ(entry.kind, EntryKind::kElf) << "the device-linked .nv_fatbin has no PTX";
      ASSERT_TRUE(entry.cubin.has_value());
      EXPECT_EQ(entry.cubin->elf_type, 2) << "device-linked cubins are ET_EXEC";
    } else if (entry.kind == EntryKind::kPtx) {
      saw_relfatbin_ptx = true;
    }
  }
  EXPECT_TRUE(saw_relfatbin_ptx);
  EXPECT_THAT(list_elf_and_ptx(*code, "r.so"),
              ::testing::EndsWith("cuobjdump info    : No PTX file found to extract from "
                                  "'r.so'. You may try with -all option.\n"));
  EXPECT_EQ(judge(*code, {12, 1}).run, RunVerdict::kDoesNotRun);
  EXPECT_EQ(judge(*code, {9, 0}).run, RunVerdict::kSass);
}

TEST(Nvcc, BareCubins) {
  if (!nvcc_on_path()) GTEST_SKIP() << "nvcc is not on PATH";
  struct Case {
    const char* output;
    const char* arguments;
    const char* listing;
  };
  for (const Case& c : {
           Case{"a.cubin", "-cubin -arch=sm_121a", "ELF file    1: a.sm_121a.cubin\n"},
           Case{"p.cubin", "-cubin -arch=sm_120", "ELF file    1: p.sm_120.cubin\n"},
           Case{"f.cubin", "-cubin -gencode arch=compute_120f,code=sm_120f",
                "ELF file    1: f.sm_120.cubin\n"},
           Case{"h.cubin", "-cubin -arch=sm_90a", "ELF file    1: h.sm_90a.cubin\n"},
       }) {
    auto code = build_and_read(c.output, c.arguments);
    ASSERT_TRUE(code);
    EXPECT_EQ(code->file_kind, GpuFileKind::kCubin);
    EXPECT_THAT(list_elf_and_ptx(*code, c.output), ::testing::StartsWith(c.listing));
  }
}

}  // namespace
}  // namespace sparkdoc::elf
