// Kernels built for a GPU they refuse to run on. vLLM's CUTLASS kernels for SM 12.x are wrapped
// in a guard (`enable_sm120_only`) that compiles the kernel only where __CUDA_ARCH__ is 1200
// and, for every other architecture the file is built for, leaves a body that prints "This
// kernel only supports sm120." and traps. Once 12.1 joins the build's architectures the file
// carries sm_121 cubins; on a GB10 the driver picks them over sm_120's, and every launch ends in
// cudaErrorLaunchFailure (reference field-2026.md §5, "12.0-only builds and sm120-only trap
// guards"). A 12.0f family build compiles with __CUDA_ARCH__ 1200 and runs.
//
// The guard's text is in the cubin's data, so the cubins that could hold it are read whole:
// ELF entries for SM 12.x other than 12.0 (sm_121, sm_121a, sm_121f), decompressed where the
// fatbin compressed them (zstd through libzstd, LZ4 with decompress_lz4_block). No other entry
// is read: a large library without such cubins costs nothing more than its headers.
//
// Thread-safe per object: a GuardScanner belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "elf/fatbin.h"
#include "model/native.h"

namespace sparkdoc::elf {

// The words of the guard's message that every version of it shares.
inline constexpr std::string_view kSm120OnlyGuardText = "only supports sm120";
// A cubin is a few MB; one that says it decompresses to more is a forged header.
inline constexpr uint64_t kMaxCubinBytes = 256u << 20;

// Whether `entry` is a cubin the guard could trap in: an ELF entry for SM 12.1-12.9.
bool may_hold_sm120_only_guard(const FatbinEntry& entry);

// One entry's payload as the loader gets it: decompressed when the fatbin compressed it, else
// as stored. Errors: a payload outside the bytes, a malformed stream, a size that disagrees
// with the header's or exceeds kMaxCubinBytes.
Result<std::vector<std::byte>> entry_payload(std::span<const std::byte> image,
                                             const FatbinEntry& entry);

class ByteSource;

// Reads the candidate cubins of one file, through a descriptor of its own opened at the first
// candidate (files without one are never opened again).
class GuardScanner {
 public:
  explicit GuardScanner(std::string path);
  GuardScanner(GuardScanner&&) noexcept;
  GuardScanner& operator=(GuardScanner&&) noexcept;
  ~GuardScanner();

  // The SASS targets among `entries` (one container's) whose cubins hold the guard's text,
  // sorted and distinct. Errors: the file cannot be opened or read, or entry_payload's.
  Result<std::vector<audit::GpuTarget>> sm120_only_targets(std::span<const FatbinEntry> entries);

 private:
  std::string path_;
  std::unique_ptr<ByteSource> source_;
};

// The same over a file image in memory (the fuzzer's entry point; tests).
Result<std::vector<audit::GpuTarget>> sm120_only_targets(std::span<const std::byte> image,
                                                         std::span<const FatbinEntry> entries);

}  // namespace sparkdoc::elf
