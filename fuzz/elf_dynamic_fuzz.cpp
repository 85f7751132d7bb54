// ELF images: parse_dynamic and parse_sections. Seeds in corpus/elf_dynamic/ are small shared
// objects (ELF64 little-endian from gcc, hand-built ELF32 and big-endian images).
#include <cstddef>
#include <cstdint>

#include "elf/dynamic.h"
#include "elf/sections.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto dynamic = sparkdoc::elf::parse_dynamic(data, size);
  if (dynamic) {
    size_t total = dynamic->soname.size();
    for (const auto& name : dynamic->needed) total += name.size();
    for (const auto& dir : dynamic->rpath) total += dir.size();
    for (const auto& dir : dynamic->runpath) total += dir.size();
    (void)total;
  }
  auto sections = sparkdoc::elf::parse_sections(data, size);
  if (sections) {
    uint64_t bytes = 0;
    for (const auto& section : *sections) bytes += section.size_bytes + section.name.size();
    (void)bytes;
  }
  return 0;
}
