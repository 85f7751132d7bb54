// What machine an ELF file was built for, and the architectures sparkdoc knows by name.
//
// glibc's loader refuses an object whose class, byte order or e_machine differ from its own
// (elf/dl-load.c open_verify, elf_machine_matches_host): named by path it fails to load, and
// met while searching a directory it is skipped and the search goes on. So a library of
// another architecture is never what a need resolves to, and an extension module of another
// architecture is no code this machine can run: the audit names such a file instead of
// judging its needs and GPU code.
//
// e_ident (16 bytes) and e_machine (u16 at 18, in the file's byte order) are all that is read.
// Pure parser, never throws; the reader reads 20 bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "elf/ld_cache.h"

namespace sparkdoc::elf {

inline constexpr uint16_t kMachineX86_64 = 62;    // EM_X86_64
inline constexpr uint16_t kMachineAArch64 = 183;  // EM_AARCH64

struct ElfMachine {
  uint8_t elf_class = 0;   // ELFCLASS32 1, ELFCLASS64 2
  uint8_t byte_order = 0;  // ELFDATA2LSB 1, ELFDATA2MSB 2
  uint16_t machine = 0;    // e_machine
  bool operator==(const ElfMachine&) const = default;
};

// nullopt when the bytes are fewer than 20 or do not start with an ELF magic and a known class
// and byte order.
std::optional<ElfMachine> parse_elf_machine(std::string_view first_bytes);

// The machine of the file at `path` (a regular file only). Errors: Why::kAbsent /
// kNoPermission when it cannot be opened, kError when it is no ELF file.
Result<ElfMachine> read_elf_machine(const std::string& path);

// As `uname -m` says it where there is one: "x86_64", "aarch64", "i386", "arm", "ppc64le",
// "ppc64", "s390x", "riscv64"; else "ELF machine 243 (64-bit)".
std::string machine_name(const ElfMachine& m);

// An architecture the audit may stand for: its files, its loader's cache entries and its
// default directories (shared/reference/fatbin-and-elf.md §3.3).
struct Architecture {
  std::string_view name;       // machine_name of its files: "aarch64"
  ElfMachine machine;          // class 0: any file (an architecture sparkdoc does not know)
  int32_t ld_cache_flags = 0;  // ld.so.cache entry flags of its libraries; 0: any
  std::string_view multiarch;  // Debian's triplet: "aarch64-linux-gnu"
};

inline constexpr Architecture kX86_64{
    "x86_64", {2, 1, kMachineX86_64}, kLdCacheX86_64, "x86_64-linux-gnu"};
inline constexpr Architecture kAArch64{
    "aarch64", {2, 1, kMachineAArch64}, kLdCacheAArch64, "aarch64-linux-gnu"};

// The architecture this build runs on, chosen when it is compiled (a build for aarch64 run
// under qemu is aarch64). Elsewhere: one that accepts every file and every cache entry.
const Architecture& host_architecture();

// kX86_64 or kAArch64 by name; nullptr for any other.
const Architecture* architecture_named(std::string_view name);

}  // namespace sparkdoc::elf
