// /etc/ld.so.cache, the table ldconfig writes and the dynamic loader consults after
// LD_LIBRARY_PATH and DT_RUNPATH (ld.so(8)). Format: shared/reference/fatbin-and-elf.md §3.3 and
// glibc's dl-cache.h:
//
//   new format (glibc >= 2.32 writes only this):
//     "glibc-ld.so.cache" "1.1"   20 bytes of magic and version
//     u32 nlibs, u32 len_strings, u8 flags, 3 pad, u32 extension_offset, u32 unused[3]  (48)
//     nlibs × {i32 flags, u32 key, u32 value, u32 osversion, u64 hwcap}                 (24)
//     strings; key and value are offsets from the start of the new header
//   old format: "ld.so-1.7.0", u32 nlibs, nlibs × {i32 flags, u32 key, u32 value}; a new
//     header may follow at the next 8-byte boundary and is then preferred.
//
// Entry flags: 0x0003 is an ELF libc6 library; the architecture sits in bits 8-11
// (0x0300 x86-64, 0x0a00 AArch64). The loader takes the first entry for a soname whose flags
// match its own. Entries whose hwcap is set (glibc-hwcaps subdirectories) are kept; the
// loader prefers them on capable hardware, and which it picks does not change whether a
// soname resolves.
//
// Pure parser, never throws; every offset is checked against the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::elf {

struct LdCacheEntry {
  int32_t flags = 0;
  std::string soname;
  std::string path;
  uint64_t hwcap = 0;
  bool operator==(const LdCacheEntry&) const = default;
};

inline constexpr int32_t kLdCacheX86_64 = 0x0303;
inline constexpr int32_t kLdCacheAArch64 = 0x0a03;
// The flags of libraries this build's own architecture loads (0 on others: accept any).
int32_t host_ld_cache_flags();

// Entries in file order. Errors name what is wrong ("not an ld.so.cache", "entry 12's path
// lies outside the file").
Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view bytes);

// Reads root's /etc/ld.so.cache (at most 64 MiB). Absent when the file is not there (musl and
// some minimal images have none: the loader then searches the default directories only).
Result<std::vector<LdCacheEntry>> read_ld_cache(const Root& root);

}  // namespace sparkdoc::elf
