// ELF images: parse_dynamic, parse_sections and parse_elf_machine. Seeds in
// corpus/fuzz_elf_dynamic/ are small shared objects (ELF64 little-endian from gcc for x86_64
// and aarch64, hand-built ELF32 and big-endian images).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "elf/dynamic.h"
#include "elf/machine.h"
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
  auto machine = sparkdoc::elf::parse_elf_machine(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (machine) (void)sparkdoc::elf::machine_name(*machine);
  return 0;
}
