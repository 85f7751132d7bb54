// The audit's facts of each shared object kept between runs, so that an audit after a reboot
// (the page cache cold) reads only the files that changed: the first `sparkdoc check` after
// boot took 2.4-3.5 s on an H200 reading 846 files' headers from disk, against 0.11-0.14 s warm.
//
// What is kept is what the audit reads of a file's own bytes and nothing that depends on the
// machine around it: the ELF machine, DT_NEEDED, DT_RPATH and DT_RUNPATH, and the GPU code's
// groups by target (FileFacts). Where the needs resolve depends on LD_LIBRARY_PATH,
// ld.so.cache, torch's preload and the other files, so it is worked out again on every run from
// these facts, by the same code as for a file just read: an audit with the cache and one
// without give the same NativeAudit (tests/audit/fact_cache_test.cpp).
//
// A file's facts are taken from the cache only when its stamp (device, inode, size, mtime and
// ctime to the nanosecond) is the one they were read under. Not kept: a file that could not be
// read (its error may be a moment's: EIO, EMFILE, a permission since changed on a folder above
// it, and reading it again costs one failed open), one that changed while it was read, and one
// whose ctime is within AuditOptions::cache_settle_ns of the audit's start: a rewrite within the
// same tick of the file system's clock keeps size and timestamps, so a stamp that new cannot
// tell two versions apart yet (git's "racily clean" index entries).
//
// The index of the folder is kept too: each folder's listing by the folder's stamp, and each
// RECORD's shared objects by the RECORD's (audit/scan.h), so that an unchanged folder is
// stat'ed, not read.
//
// One file per audited folder, ROOT/audit/<16 hex digits>.bin (ROOT: core/cache_dir.h), named
// by a hash of its FactCacheKey and holding the key whole: a hash that collides reads as another
// folder's cache and is ignored. The file is untrusted input: it is read only when it is a
// regular file (never through a link) owned by the effective user, writable by no one else, in
// a folder of the same kind, and at most kMaxCacheBytes; it is parsed with every count and
// length bounded by the bytes that follow and a checksum over the whole, and anything wrong in
// it means "no cache": the audit reads every file and writes the cache again. Its layout is
// sparkdoc's own (fact_cache.cpp), not JSON: for a full CUDA stack (4887 folders, 844 files)
// nlohmann's parse of the 1 MB of JSON took 26-30 ms, half of a warm check, where this one reads
// its 827 KB in 4 ms (docs/BENCHMARKS.md); names are kept as the file system spells them,
// UTF-8 or not. It is written only when something in it changed: to a new file beside it
// (O_EXCL, 0600) renamed over it, so that concurrent writers leave one whole file (the last
// rename wins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/scan.h"
#include "audit/stamp.h"
#include "core/result.h"
#include "elf/machine.h"
#include "model/native.h"

namespace sparkdoc::audit {

inline constexpr size_t kMaxCacheBytes = 64u << 20;
inline constexpr size_t kMaxCacheEntries = 1u << 20;  // of each kind

// What the audit reads of one shared object: facts of its bytes alone.
struct FileFacts {
  std::optional<elf::ElfMachine> machine;  // none: no ELF header read
  std::string error;                       // the file could not be read; nothing else is set
  std::vector<std::string> needed;         // DT_NEEDED, in file order
  std::vector<std::string> rpath;          // DT_RPATH, as the file says it ($ORIGIN unexpanded)
  std::vector<std::string> runpath;        // DT_RUNPATH
  std::vector<CodeGroup> gpu_code;         // the listed section's groups (elf/targets.h)
  bool operator==(const FileFacts&) const = default;
};

struct CachedFile {
  FileStamp stamp;
  FileFacts facts;  // error always empty: errors are not kept
  bool operator==(const CachedFile&) const = default;
};

// Files by their path relative to the site-packages folder.
using CachedFiles = std::map<std::string, CachedFile, std::less<>>;

// All that is kept of one audited folder: each file's facts, and the index's listings of its
// folders and RECORDs (audit/scan.h), without which a cold audit would still read every folder.
struct AuditCache {
  CachedFiles files;
  IndexCache index;
  bool operator==(const AuditCache&) const = default;
};

// Which audit a cache file belongs to.
struct FactCacheKey {
  std::string site_packages;  // the path the folder is opened by (a test's Root prefix included)
  std::string architecture;   // the audited architecture's name ("aarch64")
  std::string sparkdoc_version;
  bool operator==(const FactCacheKey&) const = default;
};

// "<16 hex digits>.bin": FNV-1a of the key and the layout's format.
std::string fact_cache_file_name(const FactCacheKey& key);

// The cache file's bytes.
std::string render_fact_cache(const FactCacheKey& key, const AuditCache& cache);

// A cache file written for `key`. Errors: not a cache file, another format or key, a checksum
// that differs, a count or length beyond the end, a value out of range, an entry listed twice,
// more than kMaxCacheEntries of a kind, bytes after the last entry. Never throws.
Result<AuditCache> parse_fact_cache(std::string_view bytes, const FactCacheKey& key);

// The cache for `key` under the cache root `root`; an error (with the reason) when there is
// none to take: absent, refused (see above) or unreadable. Makes nothing.
Result<AuditCache> load_fact_cache(const std::string& root, const FactCacheKey& key);

// Writes the cache for `key` under `root`, making ROOT (0700 folders) and ROOT/audit (0700)
// where missing; refused when either belongs to another user. Whatever is at the file's name
// and is not a regular file (a link, a FIFO) is removed first, never written through.
Result<void> store_fact_cache(const std::string& root, const FactCacheKey& key,
                              const AuditCache& cache);

}  // namespace sparkdoc::audit
