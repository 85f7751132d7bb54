// The GPU code a host ELF file carries: the fatbin containers in its .nv_fatbin (and, for
// relocatable objects built with -rdc, __nv_relfatbin) sections and the entries inside them,
// read from the headers alone. Layout: shared/reference/fatbin-and-elf.md §1.
//
// A section is a run of independent containers (one per translation unit, plus one from
// nvcc's device-link step). At each 8-byte-aligned file offset the reader looks for the
// container magic 0xBA55ED50 and skips anything else; a container is a 16-byte header {u32 magic,
// u16 version, u16 header size, u64 size of its entries} followed by entries, each a header of at
// least 64 bytes and a payload (PTX text, a cubin, LTO-IR), padded to 8 bytes.
//
// Nothing is decompressed and no payload is read, except the ELF header, section table and
// .nv.compat of uncompressed cubins (so that 'a' is named from the cubin, as cuobjdump names
// it). Compressed entries keep the header's word: see FatbinEntry::elf_arch_specific.
//
// Malformed input (a container or an entry running past its end, a header size below the
// minimum, a cubin that is not one) is an error whose message gives the file offset of the
// fault; no input makes these functions read out of bounds, crash or throw.
// Thread-safe: nothing is shared between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "elf/cubin.h"

namespace sparkdoc::elf {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50;
inline constexpr uint64_t kFatbinEntryHeaderBytes = 64;

// Entry flags (u64 at +0x28 of the entry header), §1.4.
inline constexpr uint64_t kFatbinFlagLz4 = 0x2000;               // raw LZ4 block
inline constexpr uint64_t kFatbinFlagZstd = 0x8000;              // zstd frame
inline constexpr uint64_t kFatbinFlagArchSpecific = 0x100000;    // 'a': sm_121a, compute_90a
inline constexpr uint64_t kFatbinFlagFamilySpecific = 0x200000;  // 'f': sm_120f, compute_120f
inline constexpr uint64_t kFatbinFlagCompatCopy = 0x1000000;     // options hold a .nv.compat copy

// Where an entry was found. The values leave the process (audit JSON): append only.
enum class FatbinSection : uint8_t {
  kNvFatbin,     // .nv_fatbin of a host ELF file
  kNvRelfatbin,  // __nv_relfatbin: relocatable device code for a later device link
  kFatbinFile,   // the file is a fatbin (nvcc -fatbin), or bytes given to parse_fatbin_section
  kCubinFile,    // the file is a bare cubin; the entry has no fatbin header
};

enum class EntryKind : uint8_t { kPtx, kElf, kLtoIr, kUnknown };

enum class Compression : uint8_t { kNone, kZstd, kLz4 };

// What a file is, as far as its GPU code goes.
enum class GpuFileKind : uint8_t {
  kLinkedElf,       // ET_EXEC or ET_DYN host file: executable, shared object
  kRelocatableElf,  // ET_REL host object (nvcc -c)
  kFatbin,          // a bare fatbin image
  kCubin,           // a bare device ELF image
};

inline constexpr uint32_t kNoContainer = UINT32_MAX;

struct FatbinContainer {
  FatbinSection section = FatbinSection::kNvFatbin;
  uint64_t offset = 0;             // of the container header; see "Offsets" below
  uint16_t version = 0;            // 1 in every toolkit seen
  uint16_t header_size_bytes = 0;  // 16
  uint64_t fat_size_bytes = 0;     // bytes of entries after the header
  uint32_t first_entry = 0;        // index into GpuCode::entries
  uint32_t entry_count = 0;
  bool operator==(const FatbinContainer&) const = default;
};

// Offsets: file offsets from read_gpu_code; from parse_fatbin_section, offsets into its bytes
// plus its `base_offset`. Either way, payload bytes are image[payload_offset, +payload_size).
struct FatbinEntry {
  FatbinSection section = FatbinSection::kNvFatbin;
  uint32_t container_index = kNoContainer;
  uint64_t header_offset = 0;
  uint32_t header_size_bytes = 0;  // 0x40 .. 0x80 seen; payload starts this far from the header
  uint64_t payload_offset = 0;
  uint64_t payload_size_bytes = 0;  // padded to 8
  uint16_t kind_code = 0;           // u16 at +0x00: 1 PTX, 2 ELF, 8 LTO-IR
  EntryKind kind = EntryKind::kUnknown;
  // The header's "code version": the PTX ISA version for PTX (9.0 for CUDA 13.0), the cubin
  // ABI code version for ELF ([1,8] or [1,7]).
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  uint32_t arch = 0;  // SM as major * 10 + minor: 121
  uint64_t flags = 0;
  bool arch_specific = false;    // header flag 0x100000 ('a')
  bool family_specific = false;  // header flag 0x200000 ('f')
  Compression compression = Compression::kNone;
  uint32_t compressed_size_bytes = 0;    // exact stream length; 0 when not compressed
  uint64_t uncompressed_size_bytes = 0;  // 0 when not compressed
  // PTX and LTO-IR entries: the ptxas options the header carries ("--compile-only  " for -rdc
  // PTX), trailing NULs removed. Empty for ELF entries.
  std::string ptxas_options;
  // ELF entries for SM >= 100 (flag 0x1000000): attribute 0x09 of the header's copy of the
  // cubin's .nv.compat, readable even when the cubin is compressed.
  std::optional<uint32_t> header_compat_arch_specific;
  // Uncompressed ELF entries (and bare cubins): what the cubin itself says.
  std::optional<CubinInfo> cubin;

  // 'a' for the ELF name cuobjdump 13.0 lists. From the cubin when it was read, as cuobjdump
  // does. For compressed cubins: header flag 0x100000 or compat attribute 0x09 = 1 in the
  // header's compat copy. That matches cuobjdump on every file nvcc 12.8-13.0 writes; it could
  // differ on (a) a fatbin whose header flag disagrees with its cubin (hand-patched, or a
  // fatbinary older than 12.8, if those did not set 0x100000: unverified), where SM < 100 leaves
  // no compat copy to check, and (b) a cubin whose e_flags SM differs from the header arch.
  bool elf_arch_specific() const;
  // The SM cuobjdump names an ELF entry by: the cubin's when read, else the header's.
  uint32_t elf_sm() const;
  bool operator==(const FatbinEntry&) const = default;
};

struct GpuCode {
  GpuFileKind file_kind = GpuFileKind::kFatbin;
  std::vector<FatbinContainer> containers;
  std::vector<FatbinEntry> entries;  // file order: by section (table order), then offset
  bool operator==(const GpuCode&) const = default;
};

// Walks `bytes` as the contents of one fatbin section (or a whole .fatbin file). Bytes between
// containers are skipped; bytes that hold no container give an empty GpuCode. `section` is
// recorded on every container and entry; `base_offset` is added to every offset (pass the
// section's file offset so that offsets and error messages name file offsets).
Result<GpuCode> parse_fatbin_section(std::span<const std::byte> bytes,
                                     FatbinSection section = FatbinSection::kFatbinFile,
                                     uint64_t base_offset = 0);
Result<GpuCode> parse_fatbin_section(const void* data, size_t size,
                                     FatbinSection section = FatbinSection::kFatbinFile,
                                     uint64_t base_offset = 0);

// Reads the file at `path` piecewise (pread of a few KB around each header, not a mapping:
// byte_source.h says why): only the ELF section table, the container and entry headers and the
// ELF header, section table and .nv.compat of uncompressed cubins are read, whatever the file's
// size.
// Accepts host ELF files (any class and byte order; .nv_fatbin and __nv_relfatbin are read
// from every file that has them), bare fatbin files and bare cubins. A host ELF file without
// those sections gives an empty GpuCode. Errors name the file: Why::kAbsent / kNoPermission
// when it cannot be opened, kError for anything else (not ELF, a section beyond the end of the
// file, malformed fatbin data).
Result<GpuCode> read_gpu_code(const std::string& path);

// A file's GPU code as it is read, one container at a time: `container` is null for the lone
// entry of a bare cubin, which has none. Container and entry indices count from the start of
// the file, as in read_gpu_code's GpuCode. `entries` is valid only during the call.
using GpuCodeSink =
    std::function<void(const FatbinContainer* container, std::span<const FatbinEntry> entries)>;

// read_gpu_code without keeping the entries: each container goes to `sink` as soon as it is
// read, so memory stays at one container's entries whatever the file's size. Returns the
// file's kind. Errors as read_gpu_code's; the sink may have had some containers before one.
Result<GpuFileKind> scan_gpu_code(const std::string& path, const GpuCodeSink& sink);

// The same for a whole file image in memory (the fuzzer's entry point; tests).
Result<GpuCode> parse_gpu_code(std::span<const std::byte> image, std::string_view name);

std::string_view section_name(FatbinSection section);
std::string_view kind_name(EntryKind kind);

// Decodes one raw LZ4 block (the format of entries with flag 0x2000: no frame, no checksum)
// into exactly `uncompressed_size_bytes` bytes. Errors on any malformed sequence, on output
// that would overrun or fall short of that size, and on sizes beyond LZ4's 255:1 bound (so
// that a forged header cannot make it allocate without limit). Never called by the readers
// above: callers decompress when they need a cubin's contents.
Result<std::vector<std::byte>> decompress_lz4_block(std::span<const std::byte> compressed,
                                                    uint64_t uncompressed_size_bytes);

}  // namespace sparkdoc::elf
