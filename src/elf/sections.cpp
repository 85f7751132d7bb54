#include "elf/sections.h"

#include <fmt/format.h>
#include <gelf.h>

#include "elf/elf_file.h"
#include "elf/mapped_read.h"

namespace sparkdoc::elf {
namespace {

Result<std::vector<SectionInfo>> sections_of(const ElfFile& file) {
  Elf* elf = file.get();
  size_t count = 0;
  if (elf_getshdrnum(elf, &count) != 0) return fail(file.libelf_error("bad section count"));
  // A missing or broken name table costs the names only, not the ranges.
  size_t names_index = 0;
  const bool have_names = elf_getshdrstrndx(elf, &names_index) == 0;
  std::vector<SectionInfo> out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      return fail(file.libelf_error("cannot read a section header"));
    }
    SectionInfo section;
    if (have_names) {
      if (const char* name = elf_strptr(elf, names_index, shdr.sh_name)) section.name = name;
    }
    section.type = shdr.sh_type;
    section.flags = shdr.sh_flags;
    section.file_offset = shdr.sh_offset;
    section.size_bytes = shdr.sh_size;
    out.push_back(std::move(section));
  }
  return out;
}

}  // namespace

Result<std::vector<SectionInfo>> read_sections(const std::string& path) {
  return read_unless_changed(path, ElfFile::open, sections_of);
}

Result<std::vector<SectionInfo>> parse_sections(const void* data, size_t size) {
  try {
    auto file = ElfFile::from_memory(data, size, "<memory>");
    if (!file) return tl::unexpected(std::move(file.error()));
    return sections_of(*file);
  } catch (const std::exception& e) {
    return fail(fmt::format("<memory>: {}", e.what()));
  }
}

}  // namespace sparkdoc::elf
