#include "elf/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/bytes.h"
#include "core/fs.h"
#include "elf/mapped_read.h"

namespace sparkdoc::elf {
namespace {

tl::unexpected<Error> outside(uint64_t offset, uint64_t length, uint64_t size) {
  return fail(
      fmt::format("{} bytes at offset {:#x} lie beyond the end ({} bytes)", length, offset, size));
}

}  // namespace

Result<std::span<const std::byte>> MemorySource::fetch(uint64_t offset, uint64_t length) {
  if (!bytes::fits(size(), offset, length)) return outside(offset, length, size());
  return bytes_.subspan(static_cast<size_t>(offset), static_cast<size_t>(length));
}

Result<FileSource> FileSource::open(const std::string& path) {
  auto opened = open_regular_file(path);
  if (!opened) return tl::unexpected(std::move(opened.error()));
  struct stat st;
  if (::fstat(opened->get(), &st) != 0) {
    const int err = errno;
    return fail(fmt::format("cannot stat {}: {}", path, std::strerror(err)));
  }
  return FileSource(path, opened->release(), static_cast<uint64_t>(std::max<off_t>(st.st_size, 0)));
}

FileSource::FileSource(FileSource&& other) noexcept
    : ByteSource(other),
      path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      uses_(other.uses_),
      windows_(std::move(other.windows_)) {}

FileSource& FileSource::operator=(FileSource&& other) noexcept {
  if (this != &other) {
    close();
    ByteSource::operator=(other);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    uses_ = other.uses_;
    windows_ = std::move(other.windows_);
  }
  return *this;
}

FileSource::~FileSource() {
  close();
}

void FileSource::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<std::span<const std::byte>> FileSource::fetch(uint64_t offset, uint64_t length) {
  if (!bytes::fits(size(), offset, length)) return outside(offset, length, size());
  ++uses_;
  for (Window& window : windows_) {
    if (offset >= window.offset &&
        bytes::fits(window.bytes.size(), offset - window.offset, length)) {
      window.last_use = uses_;
      return std::span<const std::byte>(window.bytes)
          .subspan(static_cast<size_t>(offset - window.offset), static_cast<size_t>(length));
    }
  }
  Window& window = windows_[0].last_use <= windows_[1].last_use ? windows_[0] : windows_[1];
  const uint64_t want = std::min(std::max(length, kWindowBytes), size() - offset);
  window.bytes.resize(static_cast<size_t>(want));
  window.offset = offset;
  window.last_use = uses_;
  uint64_t done = 0;
  while (done < want) {
    const ssize_t n = ::pread(fd_, window.bytes.data() + done, static_cast<size_t>(want - done),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      // The end of the file came before the size fstat gave at open: it was truncated since.
      window.bytes.clear();
      note_changed();
      return fail(changed_while_read(path_));
    }
    if (n < 0) {
      const int err = errno;
      window.bytes.clear();
      return fail(fmt::format("{}: read of {} bytes at offset {:#x} failed: {}", path_, want,
                              offset + done, std::strerror(err)));
    }
    done += static_cast<uint64_t>(n);
  }
  return std::span<const std::byte>(window.bytes).first(static_cast<size_t>(length));
}

void FileSource::prefetch(uint64_t offset, uint64_t length) {
  // A failed read is reported again by the fetch that needs the bytes.
  (void)fetch(offset, length);
}

}  // namespace sparkdoc::elf
