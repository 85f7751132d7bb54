#include "elf/machine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "core/fs.h"
#include "core/paths.h"

namespace sparkdoc::elf {
namespace {

constexpr size_t kPrefix = 20;  // e_ident, e_type, e_machine

#if defined(__x86_64__)
constexpr const Architecture& kHost = kX86_64;
#elif defined(__aarch64__)
constexpr const Architecture& kHost = kAArch64;
#else
constexpr Architecture kHost{"", {}, 0, host_multiarch()};
#endif

}  // namespace

std::optional<ElfMachine> parse_elf_machine(std::string_view b) {
  if (b.size() < kPrefix || !b.starts_with("\x7f"
                                           "ELF"))
    return std::nullopt;
  ElfMachine m;
  m.elf_class = static_cast<uint8_t>(b[4]);
  m.byte_order = static_cast<uint8_t>(b[5]);
  if ((m.elf_class != 1 && m.elf_class != 2) || (m.byte_order != 1 && m.byte_order != 2)) {
    return std::nullopt;
  }
  auto lo = static_cast<uint8_t>(b[18]);
  auto hi = static_cast<uint8_t>(b[19]);
  if (m.byte_order == 2) std::swap(lo, hi);
  m.machine = static_cast<uint16_t>(lo | (hi << 8));
  return m;
}

Result<ElfMachine> read_elf_machine(const std::string& path) {
  auto fd = open_regular_file(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  std::array<char, kPrefix> bytes{};
  ssize_t got = -1;
  do {
    got = ::pread(fd->get(), bytes.data(), bytes.size(), 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return fail(why_from_errno(errno), fmt::format("{}: cannot be read", path));
  auto m = parse_elf_machine(std::string_view(bytes.data(), static_cast<size_t>(got)));
  if (!m) return fail(fmt::format("{}: not an ELF file", path));
  return *m;
}

std::string machine_name(const ElfMachine& m) {
  const bool wide = m.elf_class == 2;
  const bool little = m.byte_order == 1;
  switch (m.machine) {
    case kMachineX86_64:
      if (wide) return "x86_64";
      break;
    case kMachineAArch64:
      if (wide) return little ? "aarch64" : "aarch64_be";
      break;
    case 3:  // EM_386
      if (!wide) return "i386";
      break;
    case 40:  // EM_ARM
      if (!wide) return "arm";
      break;
    case 21:  // EM_PPC64
      if (wide) return little ? "ppc64le" : "ppc64";
      break;
    case 22:  // EM_S390
      if (wide) return "s390x";
      break;
    case 243:  // EM_RISCV
      if (wide) return "riscv64";
      break;
    default:
      break;
  }
  return fmt::format("ELF machine {} ({}-bit, {}-endian)", m.machine, wide ? 64 : 32,
                     little ? "little" : "big");
}

const Architecture& host_architecture() {
  return kHost;
}

const Architecture* architecture_named(std::string_view name) {
  for (const Architecture* a : {&kX86_64, &kAArch64}) {
    if (a->name == name) return a;
  }
  return nullptr;
}

}  // namespace sparkdoc::elf
