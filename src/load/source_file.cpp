#include "load/source_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/fs.h"

namespace sparkdoc::load {
namespace {

// linux/magic.h
constexpr long kTmpfsMagic = 0x01021994;
constexpr long kRamfsMagic = 0x858458f6;

// cachestat(2), Linux 6.5: the same number on every architecture (the generic table).
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

tl::unexpected<Error> errno_error(std::string_view what, const std::string& path, int err) {
  return fail(why_from_errno(err), fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

// Bytes of the file in the page cache, when the kernel can say.
bool cached_bytes(int fd, uint64_t& out) {
  CachestatRange range{0, 0};  // len 0: to the end of the file
  Cachestat stat{};
  if (::syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) return false;
  out = stat.nr_cache * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return true;
}

// The O_DIRECT offset alignment statx reports: 0 when the filesystem says it has no direct
// I/O, nullopt-like `reported = false` when the kernel does not answer the question.
uint32_t dio_alignment(int fd, bool& reported, uint32_t& memory_align) {
  struct statx stx {};
  reported = false;
  memory_align = 0;
  if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_DIOALIGN, &stx) != 0) return 0;
  if ((stx.stx_mask & STATX_DIOALIGN) == 0) return 0;
  reported = true;
  memory_align = stx.stx_dio_mem_align;
  return stx.stx_dio_offset_align;
}

int reopen_direct(int fd, const std::string& path) {
  // Through /proc/self/fd the second descriptor names the same file even if the path was
  // replaced in between.
  std::string self = fmt::format("/proc/self/fd/{}", fd);
  int direct = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (direct < 0 && errno == ENOENT) {
    // No /proc: by the path again, still only a regular file.
    auto reopened = open_regular_file(path, O_RDONLY | O_DIRECT);
    direct = reopened ? reopened->release() : -1;
  }
  return direct;
}

}  // namespace

Result<std::unique_ptr<SourceFile>> SourceFile::open(const std::string& path,
                                                     const SourceFileOptions& options) {
  std::unique_ptr<SourceFile> file(new SourceFile());
  file->path_ = path;
  // A FIFO or a device swapped in for a shard after its header was read is refused here too.
  auto opened = open_regular_file(path);
  if (!opened) return tl::unexpected(std::move(opened.error()));
  file->buffered_fd_ = opened->release();
  struct stat st {};
  if (::fstat(file->buffered_fd_, &st) != 0) return errno_error("cannot stat", path, errno);
  file->size_ = static_cast<uint64_t>(st.st_size);
  struct statfs fs {};
  if (::fstatfs(file->buffered_fd_, &fs) == 0) {
    file->tmpfs_ =
        static_cast<long>(fs.f_type) == kTmpfsMagic || static_cast<long>(fs.f_type) == kRamfsMagic;
  }

  bool want_direct = options.direct_io != DirectIo::kOff && !file->tmpfs_;
  if (options.direct_io == DirectIo::kOff) file->why_buffered_ = "buffered: direct I/O turned off";
  if (file->tmpfs_) file->why_buffered_ = "buffered: tmpfs holds the file in memory";
  uint64_t cached = 0;
  if (want_direct && options.direct_io == DirectIo::kAuto &&
      cached_bytes(file->buffered_fd_, cached) && file->size_ > 0 && cached * 2 >= file->size_) {
    want_direct = false;
    file->why_buffered_ = fmt::format("buffered: {} of {} bytes already in the page cache",
                                      std::min(cached, file->size_), file->size_);
  }
  if (want_direct) {
    bool reported = false;
    uint32_t memory_align = 0;
    uint32_t offset_align = dio_alignment(file->buffered_fd_, reported, memory_align);
    if (reported && offset_align == 0) {
      want_direct = false;
      file->why_buffered_ = "buffered: the filesystem has no direct I/O";
    } else if (reported && (offset_align > kMaxDirectAlign || memory_align > kBufferAlign ||
                            (kMaxDirectAlign % offset_align) != 0)) {
      want_direct = false;
      file->why_buffered_ =
          fmt::format("buffered: direct I/O wants {}-byte offsets and {}-byte memory alignment",
                      offset_align, memory_align);
    } else {
      file->direct_align_ = reported ? offset_align : kBufferAlign;
    }
  }
  if (want_direct) {
    file->direct_fd_ = reopen_direct(file->buffered_fd_, path);
    if (file->direct_fd_ < 0) {
      file->why_buffered_ =
          fmt::format("buffered: O_DIRECT open refused ({})", std::strerror(errno));
    } else {
      file->direct_ok_.store(true, std::memory_order_relaxed);
    }
  }
  file->drop_ = options.drop_page_cache && !file->tmpfs_;
  if (!file->direct()) {
    // Sequential: the kernel doubles its read-ahead window for this descriptor.
    ::posix_fadvise(file->buffered_fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  return file;
}

SourceFile::~SourceFile() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  if (buffered_fd_ >= 0) ::close(buffered_fd_);
}

std::string SourceFile::mode_text() const {
  if (direct()) return fmt::format("O_DIRECT, {}-byte alignment", direct_align_);
  if (direct_fd_ >= 0) return "buffered: the kernel refused a direct read";
  return why_buffered_.empty() ? "buffered" : why_buffered_;
}

Result<void> SourceFile::read_buffered(uint64_t begin, uint64_t end, unsigned char* to,
                                       uint64_t& bytes_read) const {
  uint64_t at = begin;
  while (at < end) {
    ssize_t n = ::pread(buffered_fd_, to + (at - begin), end - at, static_cast<off_t>(at));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(fmt::format("cannot read bytes [{}, {}) of", at, end), path_, errno);
    }
    if (n == 0) {
      return fail(
          Why::kError,
          fmt::format("{}: the file ends at byte {}, before byte {} (truncated?)", path_, at, end));
    }
    at += static_cast<uint64_t>(n);
    bytes_read += static_cast<uint64_t>(n);
  }
  return {};
}

Result<uint64_t> SourceFile::read(uint64_t begin, uint64_t end, unsigned char* buffer,
                                  uint64_t& bytes_read) const {
  if (end <= begin) return uint64_t{0};
  if (direct()) {
    const uint64_t align = direct_align_;
    const uint64_t first = begin / align * align;
    const uint64_t last = (end + align - 1) / align * align;
    uint64_t got = 0;
    while (first + got < last) {
      ssize_t n =
          ::pread(direct_fd_, buffer + got, last - first - got, static_cast<off_t>(first + got));
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EINVAL && got == 0) {
          // The filesystem refused this alignment after all: read this file buffered.
          direct_ok_.store(false, std::memory_order_relaxed);
          break;
        }
        return errno_error(fmt::format("cannot read bytes [{}, {}) of", first + got, last), path_,
                           errno);
      }
      if (n == 0) break;
      got += static_cast<uint64_t>(n);
      bytes_read += static_cast<uint64_t>(n);
      if (got % align != 0) break;  // short read: the file's end, or finish it buffered
    }
    if (direct() || got > 0) {
      // The last aligned block may go past the end of the file: only [first, end) must arrive.
      if (first + got < end) {
        auto rest = read_buffered(first + got, end, buffer + got, bytes_read);
        if (!rest) return tl::unexpected(rest.error());
      }
      return begin - first;
    }
  }
  auto done = read_buffered(begin, end, buffer, bytes_read);
  if (!done) return tl::unexpected(done.error());
  return uint64_t{0};
}

void SourceFile::drop(uint64_t begin, uint64_t end) const {
  if (!drop_ || direct() || end <= begin) return;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t first = begin / page * page;
  uint64_t last = (end + page - 1) / page * page;
  ::posix_fadvise(buffered_fd_, static_cast<off_t>(first), static_cast<off_t>(last - first),
                  POSIX_FADV_DONTNEED);
}

}  // namespace sparkdoc::load
