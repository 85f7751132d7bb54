// Where the GPU-code readers get their bytes: a buffer in memory, or a file read piecewise
// with pread(2). Internal to the component.
//
// Files are read, not mapped: the readers touch one small header every few hundred KB of a
// large .nv_fatbin (libtorch_cuda.so: ~2,800 entries over ~600 MB), and a page fault per header
// measured ~10 us against ~1 us for a pread of the same bytes (warm page cache, 6.x kernel in a
// VM), so a 600 MB library took 30-50 ms mapped and 3-6 ms read.
//
// Not thread-safe per object; distinct objects may be used from distinct threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace sparkdoc::elf {

class ByteSource {
 public:
  explicit ByteSource(uint64_t size_bytes) : size_bytes_(size_bytes) {}
  virtual ~ByteSource() = default;

  uint64_t size() const { return size_bytes_; }

  // The `length` bytes at `offset`. A range that does not lie inside the source is an error,
  // as is a failed read. The span stays valid only until the next fetch from this source:
  // callers copy out what they need before fetching again.
  virtual Result<std::span<const std::byte>> fetch(uint64_t offset, uint64_t length) = 0;

  // A hint that the caller is about to read [offset, offset + length) piece by piece: a file
  // source reads it in one go. Errors surface at the fetches that follow.
  virtual void prefetch(uint64_t offset, uint64_t length) {
    (void)offset;
    (void)length;
  }

 protected:
  ByteSource(const ByteSource&) = default;
  ByteSource& operator=(const ByteSource&) = default;

 private:
  uint64_t size_bytes_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const std::byte> bytes)
      : ByteSource(bytes.size()), bytes_(bytes) {}
  Result<std::span<const std::byte>> fetch(uint64_t offset, uint64_t length) override;

 private:
  std::span<const std::byte> bytes_;
};

// Reads through two windows of at least kWindowBytes each, the least recently used one
// refilled on a miss: the headers of one entry (container header, entry header, options, cubin
// ELF header, the start of a cubin's .nv.compat) share one window, and a cubin's section table,
// at its far end, takes the other, so an uncompressed cubin costs two reads and a compressed
// entry one.
class FileSource final : public ByteSource {
 public:
  static constexpr uint64_t kWindowBytes = 2048;

  // Errors carry Why::kAbsent / kNoPermission from open(2); kError for anything that is not a
  // regular file. The size is fstat's at open: a fetch that meets the end of the file before it
  // (the file was truncated since) is changed_while_read's error, noted for the thread's
  // ChangeWatch (mapped_read.h).
  static Result<FileSource> open(const std::string& path);

  FileSource(FileSource&& other) noexcept;
  FileSource& operator=(FileSource&& other) noexcept;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  ~FileSource() override;

  Result<std::span<const std::byte>> fetch(uint64_t offset, uint64_t length) override;
  void prefetch(uint64_t offset, uint64_t length) override;

 private:
  FileSource(std::string path, int fd, uint64_t size_bytes)
      : ByteSource(size_bytes), path_(std::move(path)), fd_(fd) {}
  void close();

  struct Window {
    uint64_t offset = 0;
    uint64_t last_use = 0;
    std::vector<std::byte> bytes;
  };

  std::string path_;
  int fd_ = -1;
  uint64_t uses_ = 0;
  std::array<Window, 2> windows_;
};

}  // namespace sparkdoc::elf
