// The section table of an ELF file: where each named section's bytes lie in the file. Callers
// that look for data libelf has no type for (the CUDA arch list in .rodata, .nv_fatbin) find
// their byte ranges here and read only those.
//
// Same inputs, errors and threading as dynamic.h. Offsets and sizes are as the headers state
// them: a corrupt file may state ranges that lie beyond its end, so readers must bound their
// reads by the file size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace sparkdoc::elf {

struct SectionInfo {
  std::string name;          // ".rodata"; empty when the name cannot be read
  uint32_t type = 0;         // sh_type: 1 SHT_PROGBITS, 6 SHT_DYNAMIC, 8 SHT_NOBITS (no file bytes)
  uint64_t flags = 0;        // sh_flags: 0x2 SHF_ALLOC, 0x1 SHF_WRITE, 0x4 SHF_EXECINSTR
  uint64_t file_offset = 0;  // sh_offset
  uint64_t size_bytes = 0;   // sh_size
  bool operator==(const SectionInfo&) const = default;
};

// Every section but the null section 0, in table order. A file without section headers gives
// an empty list.
Result<std::vector<SectionInfo>> read_sections(const std::string& path);
Result<std::vector<SectionInfo>> parse_sections(const void* data, size_t size);

}  // namespace sparkdoc::elf
