// The native-code audit of one site-packages folder: for every shared object, the libraries
// it needs and where the loader would find them (elf/loader.h), and its GPU code as groups of
// containers by target (elf/targets.h), with the distribution owning it. Facts only: whether
// the code runs on a GPU, and what that means per package, the checks judge
// (checks/native_code.h).
//
// Reads only headers: the dynamic section through libelf's mapping of each file (a few pages
// each) and the fatbin headers with pread, over a pool of threads; and with a cache
// (AuditOptions::cache_root), only of the files that changed since they were last read
// (audit/fact_cache.h), so that an audit after a reboot waits on the disk for those alone. Never
// fails as a whole: a file that cannot be read is an error of its own and the audit goes on. A file
// truncated, rewritten or replaced while it is read (an install beside the audit) is such an error,
// marked NativeFile::changed_during_read: a page of the mapping that vanished reads as zeros
// instead of killing the process with SIGBUS (elf/mapped_read.h), and what was read is thrown away.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "elf/ld_cache.h"
#include "elf/loader.h"
#include "elf/machine.h"
#include "model/native.h"

namespace sparkdoc::audit {

struct AuditOptions {
  Root root;
  std::string site_packages;  // machine path
  std::string torch_cuda;     // torch.version.cuda ("13.0"); "" unknown
  std::string ld_library_path;
  std::vector<elf::LdCacheEntry> ld_cache;
  std::string bnb_cuda_version;  // $BNB_CUDA_VERSION
  unsigned threads = 0;          // 0: one per online CPU, at most 32
  // The machine whose loader is emulated: its files are judged, its ld.so.cache entries and
  // default directories (/usr/lib/<multiarch>) searched; a file of another machine is named,
  // its needs not resolved. This build's own architecture unless a test stands for another.
  elf::Architecture architecture = elf::host_architecture();
  // Called from worker threads as files finish (done, total); may be empty.
  std::function<void(size_t, size_t)> progress;
  // sparkdoc's cache root (core/cache_dir.h), under which each file's facts are kept between
  // audits (audit/fact_cache.h): a file whose stamp is unchanged is then not read. "" keeps
  // no cache and reads every file.
  std::string cache_root;
  // A file whose ctime is less than this long before the audit began is read but not kept: a
  // stamp that new cannot yet tell two versions of the file apart (fact_cache.h). 2 s covers
  // the coarsest timestamp grain of the file systems a site-packages folder lives on.
  int64_t cache_settle_ns = 2'000'000'000;
};

// How an audit went, beside its facts (which are the same with the cache and without it).
struct AuditStats {
  size_t files_read = 0;        // shared objects opened and read
  size_t files_from_cache = 0;  // shared objects whose facts came from the cache
  size_t listings_read = 0;     // folders listed and RECORDs read (not taken from the cache)
  bool cache_loaded = false;    // a cache was there and taken
  bool cache_written = false;   // the cache was written again (something in it changed)
  // Why no cache was taken or written ("" when none was asked for, or all went well). Never an
  // error of the audit: without a cache every file is read.
  std::string cache_problem;
  // How long each part took, in order, of those that ran: "cache_load", "stamps", "index",
  // "files", "cache_store", "resolve".
  std::vector<std::pair<std::string, double>> phases_ms;
};

// Never fails as a whole: a folder that cannot be indexed is NativeAudit::error, a file that
// cannot be read its NativeFile::error (with changed_during_read when it changed under the read:
// a SIGBUS absorbed, a read that met an early end, or a size, inode or timestamp that differ
// after the read from before it).
// With out_stats, how it went there.
NativeAudit run_audit(const AuditOptions& options, AuditStats* out_stats = nullptr);

}  // namespace sparkdoc::audit
