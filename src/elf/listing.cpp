#include "elf/listing.h"

#include <fmt/format.h>

namespace sparkdoc::elf {
namespace {

constexpr std::string_view kInfo = "cuobjdump info    : ";

bool has_containers(const GpuCode& code, FatbinSection section) {
  for (const FatbinContainer& container : code.containers) {
    if (container.section == section) return true;
  }
  return false;
}

}  // namespace

FatbinSection cuobjdump_section(GpuFileKind kind, std::optional<FatbinSection> first_container,
                                bool any_nv_fatbin_container) {
  switch (kind) {
    case GpuFileKind::kFatbin:
      // One section's bytes (parse_fatbin_section records the caller's section on each).
      return first_container.value_or(FatbinSection::kFatbinFile);
    case GpuFileKind::kCubin:
      return FatbinSection::kCubinFile;
    case GpuFileKind::kLinkedElf:
    case GpuFileKind::kRelocatableElf:
      break;
  }
  return any_nv_fatbin_container ? FatbinSection::kNvFatbin : FatbinSection::kNvRelfatbin;
}

FatbinSection cuobjdump_section(const GpuCode& code) {
  std::optional<FatbinSection> first;
  if (!code.containers.empty()) first = code.containers.front().section;
  return cuobjdump_section(code.file_kind, first, has_containers(code, FatbinSection::kNvFatbin));
}

bool cuobjdump_lists(const GpuCode& code, const FatbinEntry& entry) {
  return entry.section == cuobjdump_section(code);
}

std::string listing_stem(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && dot > 0) name = name.substr(0, dot);
  return std::string(name);
}

std::string elf_listing_arch(const FatbinEntry& entry) {
  return fmt::format("sm_{}{}", entry.elf_sm(), entry.elf_arch_specific() ? "a" : "");
}

std::string ptx_listing_arch(const FatbinEntry& entry) {
  const char* suffix = entry.arch_specific ? "a" : entry.family_specific ? "f" : "";
  return fmt::format("sm_{}{}", entry.arch, suffix);
}

std::string list_elf_and_ptx(const GpuCode& code, std::string_view path) {
  if (list_exit_status(code) != 0) {
    return fmt::format("{}File '{}' does not contain device code\n", kInfo, path);
  }
  const FatbinSection listed = cuobjdump_section(code);
  const std::string stem = listing_stem(path);
  std::string out;
  int elf_count = 0;
  int ptx_count = 0;
  for (const FatbinEntry& entry : code.entries) {
    if (entry.section != listed) continue;
    if (entry.kind == EntryKind::kElf) {
      ++elf_count;
      if (entry.section == FatbinSection::kCubinFile) {
        out +=
            fmt::format("ELF file {:4d}: {}.{}.cubin\n", elf_count, stem, elf_listing_arch(entry));
      } else {
        out += fmt::format("ELF file {:4d}: {}.{}.{}.cubin\n", elf_count, stem, elf_count,
                           elf_listing_arch(entry));
      }
    } else if (entry.kind == EntryKind::kPtx) {
      ++ptx_count;
      out += fmt::format("PTX file {:4d}: {}.{}.{}.ptx\n", ptx_count, stem, ptx_count,
                         ptx_listing_arch(entry));
    }
  }
  if (elf_count == 0) {
    out += fmt::format("{}No ELF file found to extract from '{}'. You may try with -all option.\n",
                       kInfo, path);
  }
  if (ptx_count == 0) {
    out += fmt::format("{}No PTX file found to extract from '{}'. You may try with -all option.\n",
                       kInfo, path);
  }
  return out;
}

int list_exit_status(const GpuCode& code) {
  if (code.file_kind == GpuFileKind::kCubin) return 0;
  return has_containers(code, cuobjdump_section(code)) ? 0 : 255;
}

}  // namespace sparkdoc::elf
