// An open ELF image through libelf, shared by everything in this component that reads ELF
// (dynamic section now; section table, fatbin and version needs later). Internal to the
// component: libelf's types do not leave src/elf.
//
// Not thread-safe per object; distinct objects may be used from distinct threads. An object
// opened from a file is used and destroyed on the thread that opened it (its mapping is guarded
// for that thread: mapped_read.h).
#pragma once

#include <libelf.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "elf/mapped_read.h"

namespace sparkdoc::elf {

class ElfFile {
 public:
  // Opens a file read-only. libelf maps it, so only the pages actually read (headers, the
  // dynamic section, a few strings) are touched even for a 1 GB libtorch_cuda.so. A page that
  // vanishes because the file is truncated meanwhile reads as zeros and is counted for this
  // thread's ChangeWatch (mapped_read.h); read_unless_changed turns that into an error.
  // Fails, with the path in the message, when the file cannot be opened or is not ELF.
  static Result<ElfFile> open(const std::string& path);
  // Copies `size` bytes: libelf takes a mutable image, and the caller's bytes stay untouched.
  // `name` appears in error messages.
  static Result<ElfFile> from_memory(const void* data, size_t size, std::string name);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  Elf* get() const { return elf_; }
  const std::string& name() const { return name_; }
  // "<name>: <what>: <libelf's last error>", for failures of libelf calls on this image.
  std::string libelf_error(std::string_view what) const;

 private:
  ElfFile(std::string name, int fd, Elf* elf, std::vector<char> image,
          std::optional<MappedReadGuard> guard);
  void close();

  std::string name_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::vector<char> image_;  // owned copy behind from_memory; its buffer outlives elf_
  std::optional<MappedReadGuard> guard_;  // open(): from before elf_begin to after elf_end
};

}  // namespace sparkdoc::elf
