// Fatbin sections and cubins: parse_fatbin_section, inspect_cubin, parse_gpu_code, the LZ4
// block decoder, the sm120-only guard's reads (zstd and LZ4 cubins, elf/guards.h) and everything
// computed from a parsed section (names, listing, the code facts and the checks' verdict on them).
// Seeds in corpus/fuzz_elf_fatbin/ are .nv_fatbin and __nv_relfatbin sections cut from nvcc 13.0
// builds (uncompressed, zstd, LZ4, -rdc, the guard's builds), bare fatbin and cubin files, and
// hand-built containers (an ABI v7 cubin, ptxas options, an LZ4 PTX entry, LTO-IR).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "checks/native_code.h"
#include "elf/cubin.h"
#include "elf/fatbin.h"
#include "elf/guards.h"
#include "elf/listing.h"
#include "elf/targets.h"

namespace {

// Large enough for every payload in the seeds, small enough to keep executions fast.
constexpr uint64_t kMaxDecodedBytes = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::elf;
  const auto bytes = std::as_bytes(std::span(data, size));

  auto code = parse_fatbin_section(bytes, FatbinSection::kNvFatbin, 0);
  if (code) {
    size_t total = list_elf_and_ptx(*code, "fuzz.so").size();
    const auto facts = gpu_code_facts(*code);
    total +=
        sparkdoc::checks::code_runs_name(
            sparkdoc::checks::judge_gpu_code(facts, sparkdoc::gpu::ComputeCapability{12, 1}).run)
            .size();
    for (const FatbinEntry& entry : code->entries) {
      total += elf_listing_arch(entry).size() + ptx_listing_arch(entry).size();
      total += sparkdoc::audit::sass_name(entry_target(entry)).size() + ptx_isa(entry).size();
      if (entry.compression != Compression::kLz4 ||
          entry.uncompressed_size_bytes > kMaxDecodedBytes) {
        continue;
      }
      auto decoded =
          decompress_lz4_block(bytes.subspan(entry.payload_offset, entry.compressed_size_bytes),
                               entry.uncompressed_size_bytes);
      if (decoded && entry.kind == EntryKind::kElf) {
        auto cubin = inspect_cubin(*decoded);
        total += cubin ? cubin->sm : 0;
      }
    }
    (void)total;
  }

  auto cubin = inspect_cubin(bytes);
  (void)cubin;

  // Whole files: host ELF section selection, bare fatbins and cubins.
  auto file = parse_gpu_code(bytes, "fuzz.so");
  if (file) {
    size_t listed = list_elf_and_ptx(*file, "fuzz.so").size();
    listed += sparkdoc::checks::judge_gpu_code(gpu_code_facts(*file),
                                               sparkdoc::gpu::ComputeCapability{12, 1})
                  .sass_targets.size();
    // The cubins the sm120-only guard could be in, read whole and decompressed (zstd, LZ4).
    bool small = true;
    for (const FatbinEntry& entry : file->entries) {
      small = small && (!may_hold_sm120_only_guard(entry) ||
                        entry.uncompressed_size_bytes <= kMaxDecodedBytes);
    }
    if (small) {
      auto guarded = sm120_only_targets(bytes, file->entries);
      listed += guarded ? guarded->size() : 0;
    }
    (void)listed;
  }

  // The decoder on its own: the first two bytes give the output size.
  if (size >= 2) {
    const uint64_t out_size = data[0] | (uint64_t{data[1]} << 8);
    auto decoded = decompress_lz4_block(bytes.subspan(2), out_size);
    (void)decoded;
  }
  return 0;
}
