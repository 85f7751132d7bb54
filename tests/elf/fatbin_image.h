// Builds fatbin containers, cubins and host ELF files byte by byte, with the field layouts of
// shared/reference/fatbin-and-elf.md §1-§2, for shapes nvcc will not produce (ABI v7 cubins,
// ptxas 12.8's e_flags 'a' bit, broken sizes) and for tests on machines without nvcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sparkdoc::elf::testing {

// The bytes of an image, as the readers take them.
inline std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

inline void put_le(std::string& out, size_t at, uint64_t value, int bytes) {
  if (out.size() < at + static_cast<size_t>(bytes)) out.resize(at + static_cast<size_t>(bytes));
  for (int i = 0; i < bytes; ++i) {
    out[at + static_cast<size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

inline void pad_to(std::string& out, size_t alignment) {
  while (out.size() % alignment != 0) out.push_back('\0');
}

struct CubinSpec {
  bool is_64 = true;
  uint8_t os_abi = 0x41;
  uint8_t abi_version = 8;
  uint16_t type = 2;  // ET_EXEC
  uint16_t machine = 190;
  uint32_t e_flags = 0x06007902;      // ABI v8 sm_121 as ptxas 13.0 writes it
  std::optional<std::string> compat;  // raw .nv.compat records
  bool with_code = true;              // a non-empty SHF_EXECINSTR section
};

// .nv.compat records as ptxas 13.0 writes them, attribute 0x09 first.
inline std::string compat_records(uint8_t arch_specific) {
  return std::string("\x02\x09", 2) + static_cast<char>(arch_specific) +
         std::string("\x00\x02\x02\x01\x00\x04\x0b\x08\x00", 9) + std::string(8, '\0');
}

// Layout: ELF header, code bytes, .nv.compat bytes, section headers [null, .text, .nv.compat].
inline std::string build_cubin(const CubinSpec& spec) {
  const size_t ehdr = spec.is_64 ? 64 : 52;
  const size_t shent = spec.is_64 ? 64 : 40;
  std::string out(ehdr, '\0');
  const size_t code_at = out.size();
  out += std::string(16, '\x01');
  const size_t compat_at = out.size();
  if (spec.compat) out += *spec.compat;
  pad_to(out, 8);
  const size_t shoff = out.size();
  const size_t shnum = spec.compat ? 3 : 2;
  out.resize(shoff + shnum * shent, '\0');

  out[0] = 0x7f;
  out[1] = 'E';
  out[2] = 'L';
  out[3] = 'F';
  out[4] = static_cast<char>(spec.is_64 ? 2 : 1);
  out[5] = 1;
  out[6] = 1;
  out[7] = static_cast<char>(spec.os_abi);
  out[8] = static_cast<char>(spec.abi_version);
  put_le(out, 0x10, spec.type, 2);
  put_le(out, 0x12, spec.machine, 2);
  put_le(out, 0x14, 1, 4);
  if (spec.is_64) {
    put_le(out, 0x28, shoff, 8);
    put_le(out, 0x30, spec.e_flags, 4);
    put_le(out, 0x34, ehdr, 2);
    put_le(out, 0x3a, shent, 2);
    put_le(out, 0x3c, shnum, 2);
  } else {
    put_le(out, 0x20, shoff, 4);
    put_le(out, 0x24, spec.e_flags, 4);
    put_le(out, 0x28, ehdr, 2);
    put_le(out, 0x2e, shent, 2);
    put_le(out, 0x30, shnum, 2);
  }
  const auto section = [&](size_t index, uint32_t type, uint64_t flags, uint64_t offset,
                           uint64_t size) {
    const size_t at = shoff + index * shent;
    put_le(out, at + 4, type, 4);
    if (spec.is_64) {
      put_le(out, at + 0x08, flags, 8);
      put_le(out, at + 0x18, offset, 8);
      put_le(out, at + 0x20, size, 8);
    } else {
      put_le(out, at + 0x08, flags, 4);
      put_le(out, at + 0x10, offset, 4);
      put_le(out, at + 0x14, size, 4);
    }
  };
  section(1, 1, spec.with_code ? 0x6 : 0x2, code_at, 16);
  if (spec.compat) section(2, 0x70000086, 0, compat_at, spec.compat->size());
  return out;
}

struct EntrySpec {
  uint16_t kind = 2;
  uint32_t arch = 121;
  uint16_t version_major = 1;
  uint16_t version_minor = 8;
  uint64_t flags = 0x11;
  std::string payload;  // padded to 8 bytes in the image
  uint32_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  // Placed after the 64-byte base header behind an options descriptor, as fatbinary does.
  std::optional<std::string> options;
};

inline std::string build_entry(const EntrySpec& spec) {
  std::string header(64, '\0');
  if (spec.options) {
    put_le(header, 0x14, 0x40, 4);
    put_le(header, 0x40, 0x48, 4);
    put_le(header, 0x44, spec.options->size(), 4);
    header += *spec.options;
    pad_to(header, 8);
  }
  std::string payload = spec.payload;
  pad_to(payload, 8);
  put_le(header, 0x00, spec.kind, 2);
  put_le(header, 0x02, 0x0101, 2);
  put_le(header, 0x04, header.size(), 4);
  put_le(header, 0x08, payload.size(), 8);
  put_le(header, 0x10, spec.compressed_size, 4);
  put_le(header, 0x18, spec.version_minor, 2);
  put_le(header, 0x1a, spec.version_major, 2);
  put_le(header, 0x1c, spec.arch, 4);
  put_le(header, 0x28, spec.flags, 8);
  put_le(header, 0x38, spec.uncompressed_size, 8);
  return header + payload;
}

inline std::string build_container(const std::vector<EntrySpec>& entries) {
  std::string body;
  for (const EntrySpec& entry : entries) body += build_entry(entry);
  std::string out(16, '\0');
  put_le(out, 0, 0xBA55ED50, 4);
  put_le(out, 4, 1, 2);
  put_le(out, 6, 16, 2);
  put_le(out, 8, body.size(), 8);
  return out + body;
}

// A cubin entry for `arch` whose header and cubin agree, as nvcc 13.0 writes them.
inline EntrySpec cubin_entry(uint32_t arch, char variant) {
  CubinSpec cubin;
  cubin.e_flags = 0x06000002 | (arch << 8);
  cubin.compat = compat_records(variant == 'a' ? 1 : 0);
  EntrySpec entry;
  entry.arch = arch;
  entry.flags = 0x11 | (variant == 'a' ? 0x100000 : 0) | (variant == 'f' ? 0x200000 : 0);
  entry.payload = build_cubin(cubin);
  return entry;
}

inline EntrySpec ptx_entry(uint32_t arch, char variant) {
  EntrySpec entry;
  entry.kind = 1;
  entry.arch = arch;
  entry.version_major = 9;
  entry.version_minor = 0;
  entry.flags = 0x11 | (variant == 'a' ? 0x100000 : 0) | (variant == 'f' ? 0x200000 : 0);
  entry.payload = ".version 9.0\n.target sm_" + std::to_string(arch) + "\n";
  entry.options = std::string();
  return entry;
}

struct HostSection {
  std::string name;
  std::string bytes;
  uint32_t type = 1;  // SHT_PROGBITS
};

// An ELF64 little-endian host file (x86-64) holding `sections` after the null section, with a
// .shstrtab last. No program headers: the readers use the section table only.
inline std::string build_host_elf(const std::vector<HostSection>& sections, uint16_t type = 3) {
  std::string names(1, '\0');
  std::vector<size_t> name_at;
  for (const HostSection& section : sections) {
    name_at.push_back(names.size());
    names += section.name + '\0';
  }
  const size_t shstrtab_name = names.size();
  names += std::string(".shstrtab") + '\0';

  std::string out(64, '\0');
  std::vector<size_t> offset_of;
  for (const HostSection& section : sections) {
    pad_to(out, 8);
    offset_of.push_back(out.size());
    if (section.type != 8) out += section.bytes;
  }
  const size_t names_at = out.size();
  out += names;
  pad_to(out, 8);
  const size_t shoff = out.size();
  const size_t shnum = sections.size() + 2;
  out.resize(shoff + shnum * 64, '\0');

  out[0] = 0x7f;
  out[1] = 'E';
  out[2] = 'L';
  out[3] = 'F';
  out[4] = 2;
  out[5] = 1;
  out[6] = 1;
  put_le(out, 0x10, type, 2);
  put_le(out, 0x12, 62, 2);
  put_le(out, 0x14, 1, 4);
  put_le(out, 0x28, shoff, 8);
  put_le(out, 0x34, 64, 2);
  put_le(out, 0x3a, 64, 2);
  put_le(out, 0x3c, shnum, 2);
  put_le(out, 0x3e, shnum - 1, 2);
  const auto header = [&](size_t index, size_t name, uint32_t sh_type, uint64_t flags,
                          uint64_t offset, uint64_t size, uint64_t align) {
    const size_t at = shoff + index * 64;
    put_le(out, at, name, 4);
    put_le(out, at + 4, sh_type, 4);
    put_le(out, at + 8, flags, 8);
    put_le(out, at + 0x18, offset, 8);
    put_le(out, at + 0x20, size, 8);
    put_le(out, at + 0x30, align, 8);
  };
  for (size_t i = 0; i < sections.size(); ++i) {
    header(i + 1, name_at[i], sections[i].type, 0x2, offset_of[i], sections[i].bytes.size(), 8);
  }
  header(shnum - 1, shstrtab_name, 3, 0, names_at, names.size(), 1);
  return out;
}

}  // namespace sparkdoc::elf::testing
