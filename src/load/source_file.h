// A checkpoint file opened for streaming reads: pread only, never mmap (a mapping keeps its
// pages resident, and pinning mapped private pages duplicates them; reference §0.1).
//
// How it reads (DirectIo::kAuto):
// - O_DIRECT when the filesystem supports it (statx STATX_DIOALIGN; kernels before 6.1 do not
//   report it, then an O_DIRECT open that succeeds is taken at 4096-byte alignment) and less
//   than half of the file is in the page cache (cachestat(2), Linux 6.5; unknown counts as
//   cold). Direct reads leave no page cache behind.
// - Buffered reads otherwise, and for tmpfs/ramfs (their pages are the file itself). With
//   `drop_page_cache`, each range read is dropped from the page cache with
//   posix_fadvise(POSIX_FADV_DONTNEED) once read, so the cache a load leaves stays bounded by
//   what the readers hold in flight. tmpfs is never advised: on kernels that honour DONTNEED
//   for shmem it pushes the file's pages to swap.
// A direct read the kernel refuses (EINVAL) switches the file to buffered reads for good.
//
// Threading: read() and drop() may be called from several threads at once (pread is
// positional). Ownership: the descriptors close when the SourceFile is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.h"

namespace sparkdoc::load {

enum class DirectIo {
  kAuto,  // as above
  kOff,   // always buffered
  kOn,    // O_DIRECT whenever the filesystem allows it, even for a file in the page cache
};

// Direct reads are aligned to at most this; a filesystem asking for more is read buffered.
inline constexpr uint64_t kMaxDirectAlign = 64 * 1024;
// Staging buffers are aligned to this (a direct read's memory alignment must divide it).
inline constexpr uint64_t kBufferAlign = 4096;

struct SourceFileOptions {
  DirectIo direct_io = DirectIo::kAuto;
  bool drop_page_cache = true;
};

class SourceFile {
 public:
  // Opens `path` read-only. Errors name the path and errno's reason.
  static Result<std::unique_ptr<SourceFile>> open(const std::string& path,
                                                  const SourceFileOptions& options);
  ~SourceFile();
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  bool direct() const { return direct_ok_.load(std::memory_order_relaxed); }
  bool tmpfs() const { return tmpfs_; }
  // Why the file is read as it is ("O_DIRECT, 4096-byte alignment", "buffered: tmpfs", ...).
  std::string mode_text() const;

  // Reads bytes [begin, end) into `buffer` (kBufferAlign-aligned, at least
  // end - begin + 2 * kMaxDirectAlign bytes) and returns where `begin` landed in it (a direct
  // read starts at `begin` rounded down to the alignment). `bytes_read` grows by what the
  // kernel delivered. Errors: the file ends before `end` (truncated), or pread's errno.
  Result<uint64_t> read(uint64_t begin, uint64_t end, unsigned char* buffer,
                        uint64_t& bytes_read) const;
  // Drops [begin, end), widened to whole pages, from the page cache when this file is read
  // buffered with drop_page_cache on; otherwise does nothing.
  void drop(uint64_t begin, uint64_t end) const;

 private:
  SourceFile() = default;
  Result<void> read_buffered(uint64_t begin, uint64_t end, unsigned char* to,
                             uint64_t& bytes_read) const;

  std::string path_;
  int buffered_fd_ = -1;
  int direct_fd_ = -1;
  uint64_t size_ = 0;
  uint64_t direct_align_ = 0;
  bool tmpfs_ = false;
  bool drop_ = false;
  std::string why_buffered_;
  mutable std::atomic<bool> direct_ok_{false};
};

}  // namespace sparkdoc::load
