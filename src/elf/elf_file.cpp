#include "elf/elf_file.h"

#include <algorithm>
#include <cstdint>

#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/fs.h"

namespace sparkdoc::elf {
namespace {

// libelf refuses every call until the caller has named the ELF version it speaks. The
// function-local static makes that one-time handshake thread-safe without global state of ours.
bool libelf_ready() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

const char* last_libelf_message() {
  const char* msg = elf_errmsg(-1);
  return msg ? msg : "unknown libelf error";
}

// Accepts only a complete ELF object whose header libelf can read: archives, empty files and
// text are refused here so that every later call may assume a valid Ehdr.
Result<bool> check_kind(Elf* elf, const std::string& name) {
  if (elf == nullptr) {
    return fail(fmt::format("{}: not a readable ELF file: {}", name, last_libelf_message()));
  }
  switch (elf_kind(elf)) {
    case ELF_K_ELF:
      break;
    case ELF_K_AR:
      return fail(fmt::format("{}: an ar archive, not an ELF object", name));
    default:
      return fail(fmt::format("{}: not an ELF file", name));
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) {
    return fail(
        fmt::format("{}: truncated or corrupt ELF header: {}", name, last_libelf_message()));
  }
  // A file cut short (an interrupted download or copy) still has its header; its tables then
  // point past the end. The loader would refuse it, so it is an error here too.
  size_t size = 0;
  if (elf_rawfile(elf, &size) != nullptr) {
    auto table_end = [](uint64_t offset, uint64_t count, uint64_t entry) -> uint64_t {
      if (offset == 0) return 0;
      uint64_t n = count == 0 ? 1 : count;  // extended numbering keeps one entry at e_shoff
      if (entry != 0 && n > (UINT64_MAX - offset) / entry) return UINT64_MAX;
      return offset + n * entry;
    };
    uint64_t sections = table_end(ehdr.e_shoff, ehdr.e_shnum, ehdr.e_shentsize);
    uint64_t segments = ehdr.e_phnum == 0 ? 0 : table_end(ehdr.e_phoff, ehdr.e_phnum, ehdr.e_phentsize);
    uint64_t end = std::max(sections, segments);
    if (end > size) {
      return fail(fmt::format("{}: truncated: its {} table ends at byte {} of a {}-byte file",
                              name, sections >= segments ? "section header" : "program header",
                              end, size));
    }
  }
  return true;
}

}  // namespace

ElfFile::ElfFile(std::string name, int fd, Elf* elf, std::vector<char> image,
                 std::optional<MappedReadGuard> guard)
    : name_(std::move(name)),
      fd_(fd),
      elf_(elf),
      image_(std::move(image)),
      guard_(std::move(guard)) {}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : name_(std::move(other.name_)),
      fd_(std::exchange(other.fd_, -1)),
      elf_(std::exchange(other.elf_, nullptr)),
      image_(std::move(other.image_)),
      guard_(std::exchange(other.guard_, std::nullopt)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    close();
    name_ = std::move(other.name_);
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
    image_ = std::move(other.image_);
    guard_ = std::exchange(other.guard_, std::nullopt);
  }
  return *this;
}

ElfFile::~ElfFile() {
  close();
}

void ElfFile::close() {
  if (elf_ != nullptr) elf_end(elf_);
  elf_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  guard_.reset();  // after elf_end, which unmaps the file
}

std::string ElfFile::libelf_error(std::string_view what) const {
  return fmt::format("{}: {}: {}", name_, what, last_libelf_message());
}

Result<ElfFile> ElfFile::open(const std::string& path) {
  if (!libelf_ready()) return fail(fmt::format("{}: libelf is unusable", path));
  // Only a regular file reaches libelf: a FIFO named like a library would hang its read, and a
  // device would be opened (and mapped) as root.
  auto opened = open_regular_file(path);
  if (!opened) return tl::unexpected(std::move(opened.error()));
  int fd = opened->release();
  // ELF_C_READ_MMAP: pages are faulted in on demand, and libelf points into the mapping
  // instead of copying sections whose byte order and alignment already match the host. The
  // guard comes first: elf_begin itself reads the header (and, with extended numbering, the
  // first section header) from the new mapping, and the file may already be shorter than the
  // size it took.
  MappedReadGuard guard;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  ElfFile file(path, fd, elf, {}, std::move(guard));
  auto kind = check_kind(file.elf_, path);
  if (!kind) return tl::unexpected(std::move(kind.error()));
  return file;
}

Result<ElfFile> ElfFile::from_memory(const void* data, size_t size, std::string name) {
  if (!libelf_ready()) return fail(fmt::format("{}: libelf is unusable", name));
  if (data == nullptr || size == 0) return fail(fmt::format("{}: empty, not an ELF file", name));
  std::vector<char> image(static_cast<const char*>(data), static_cast<const char*>(data) + size);
  Elf* elf = elf_memory(image.data(), image.size());
  ElfFile file(std::move(name), -1, elf, std::move(image), std::nullopt);
  auto kind = check_kind(file.elf_, file.name_);
  if (!kind) return tl::unexpected(std::move(kind.error()));
  return file;
}

}  // namespace sparkdoc::elf
