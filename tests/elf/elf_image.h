// Builds small ELF images byte by byte, for classes and byte orders the host toolchain cannot
// produce (ELF32, big-endian) and for shapes it will not (no section headers, broken offsets).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sparkdoc::elf::testing {

struct ElfImageSpec {
  bool is_64 = true;
  bool big_endian = false;
  uint16_t machine = 62;  // EM_X86_64; the reader does not care
  // Dynamic entries whose value is a string (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH), in
  // order; DT_STRTAB, DT_STRSZ and DT_NULL are appended.
  std::vector<std::pair<int64_t, std::string>> strings;
  bool with_section_headers = true;
  bool with_dynamic = true;
};

// Layout: Ehdr, PT_LOAD + PT_DYNAMIC, .dynstr, .dynamic, .shstrtab, section headers.
// The image is loaded at 0x400000 so that DT_STRTAB (a virtual address) differs from the
// string table's file offset.
class ElfImage {
 public:
  static std::string build(const ElfImageSpec& spec) { return ElfImage(spec).bytes_; }

 private:
  static constexpr uint64_t kBase = 0x400000;

  explicit ElfImage(const ElfImageSpec& spec) : spec_(spec) {
    const size_t ehdr = spec.is_64 ? 64 : 52;
    const size_t phent = spec.is_64 ? 56 : 32;
    const size_t shent = spec.is_64 ? 64 : 40;
    const size_t dynent = spec.is_64 ? 16 : 8;
    const size_t phnum = spec.with_dynamic ? 2 : 1;

    std::string dynstr(1, '\0');
    std::vector<std::pair<int64_t, uint64_t>> entries;
    for (const auto& [tag, text] : spec.strings) {
      entries.emplace_back(tag, dynstr.size());
      dynstr += text;
      dynstr += '\0';
    }
    const size_t dynstr_off = ehdr + phnum * phent;
    const size_t dynamic_off = align(dynstr_off + dynstr.size(), 8);
    entries.emplace_back(5, kBase + dynstr_off);  // DT_STRTAB
    entries.emplace_back(10, dynstr.size());      // DT_STRSZ
    entries.emplace_back(0, 0);                   // DT_NULL
    const size_t dynamic_size = entries.size() * dynent;
    const std::string shstrtab = std::string("\0.dynstr\0.dynamic\0.shstrtab\0", 28);
    const size_t shstrtab_off = dynamic_off + dynamic_size;
    const size_t shoff = align(shstrtab_off + shstrtab.size(), 8);
    const size_t shnum = spec.with_section_headers ? 4 : 0;
    bytes_.assign(shoff + shnum * shent, '\0');

    // Ehdr
    const char ident[] = {0x7f,
                          'E',
                          'L',
                          'F',
                          static_cast<char>(spec.is_64 ? 2 : 1),
                          static_cast<char>(spec.big_endian ? 2 : 1),
                          1};
    bytes_.replace(0, sizeof ident, ident, sizeof ident);
    size_t at = 16;
    at = put(at, 3, 2);             // e_type ET_DYN
    at = put(at, spec.machine, 2);  // e_machine
    at = put(at, 1, 4);             // e_version
    at = word(at, 0);               // e_entry
    at = word(at, ehdr);            // e_phoff
    at = word(at, spec.with_section_headers ? shoff : 0);
    at = put(at, 0, 4);  // e_flags
    at = put(at, ehdr, 2);
    at = put(at, phent, 2);
    at = put(at, phnum, 2);
    at = put(at, shent, 2);
    at = put(at, shnum, 2);
    put(at, spec.with_section_headers ? 3 : 0, 2);  // e_shstrndx

    // Program headers: one PT_LOAD mapping the whole file, then PT_DYNAMIC.
    const size_t file_size = bytes_.size();
    program_header(ehdr, 1, 0, file_size);
    if (spec.with_dynamic) program_header(ehdr + phent, 2, dynamic_off, dynamic_size);

    bytes_.replace(dynstr_off, dynstr.size(), dynstr);
    at = dynamic_off;
    for (const auto& [tag, value] : entries) {
      at = word(at, static_cast<uint64_t>(tag));
      at = word(at, value);
    }
    bytes_.replace(shstrtab_off, shstrtab.size(), shstrtab);

    if (spec.with_section_headers) {
      // names: 1 ".dynstr", 9 ".dynamic", 18 ".shstrtab"
      section_header(shoff + shent, 1, 3, 2, dynstr_off, dynstr.size(), 0, 1, 0);
      section_header(shoff + 2 * shent, 9, spec.with_dynamic ? 6 : 1, 3, dynamic_off, dynamic_size,
                     1, 8, dynent);
      section_header(shoff + 3 * shent, 18, 3, 0, shstrtab_off, shstrtab.size(), 0, 1, 0);
    }
  }

  static size_t align(size_t v, size_t to) { return (v + to - 1) / to * to; }

  size_t put(size_t at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      int shift = spec_.big_endian ? 8 * (bytes - 1 - i) : 8 * i;
      bytes_[at + static_cast<size_t>(i)] = static_cast<char>((value >> shift) & 0xff);
    }
    return at + static_cast<size_t>(bytes);
  }
  size_t word(size_t at, uint64_t value) { return put(at, value, spec_.is_64 ? 8 : 4); }

  void program_header(size_t at, uint32_t type, uint64_t offset, uint64_t size) {
    if (spec_.is_64) {
      at = put(at, type, 4);
      at = put(at, 4, 4);  // p_flags PF_R
      at = put(at, offset, 8);
      at = put(at, kBase + offset, 8);
      at = put(at, kBase + offset, 8);
      at = put(at, size, 8);
      at = put(at, size, 8);
      put(at, 8, 8);
    } else {
      at = put(at, type, 4);
      at = put(at, offset, 4);
      at = put(at, kBase + offset, 4);
      at = put(at, kBase + offset, 4);
      at = put(at, size, 4);
      at = put(at, size, 4);
      at = put(at, 4, 4);
      put(at, 8, 4);
    }
  }

  void section_header(size_t at, uint32_t name, uint32_t type, uint64_t flags, uint64_t offset,
                      uint64_t size, uint32_t link, uint64_t align_to, uint64_t entsize) {
    at = put(at, name, 4);
    at = put(at, type, 4);
    at = word(at, flags);
    at = word(at, flags & 2 ? kBase + offset : 0);
    at = word(at, offset);
    at = word(at, size);
    at = put(at, link, 4);
    at = put(at, 0, 4);
    at = word(at, align_to);
    word(at, entsize);
  }

  const ElfImageSpec& spec_;
  std::string bytes_;
};

}  // namespace sparkdoc::elf::testing
