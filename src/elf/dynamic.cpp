#include "elf/dynamic.h"

#include <fmt/format.h>
#include <gelf.h>

#include <climits>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "elf/elf_file.h"
#include "elf/mapped_read.h"

namespace sparkdoc::elf {
namespace {

// Where the strings that dynamic entries point at live. Normally the section named by the
// dynamic section's sh_link; in a file stripped of its section headers, the bytes DT_STRTAB
// points at. With neither, a string lookup fails, which matters only if an entry needs one.
class Strings {
 public:
  static Strings in_section(Elf* elf, size_t index) { return Strings(elf, index, nullptr); }
  static Strings in_chunk(const Elf_Data* chunk) { return Strings(nullptr, 0, chunk); }
  static Strings none() { return Strings(nullptr, 0, nullptr); }

  // The NUL-terminated string at `offset`, or nullptr when it does not lie inside the table.
  const char* at(uint64_t offset) const {
    if (elf_ != nullptr) return elf_strptr(elf_, section_, offset);
    if (chunk_ == nullptr || chunk_->d_buf == nullptr || offset >= chunk_->d_size) return nullptr;
    const char* base = static_cast<const char*>(chunk_->d_buf);
    if (std::memchr(base + offset, '\0', chunk_->d_size - offset) == nullptr) return nullptr;
    return base + offset;
  }

 private:
  Strings(Elf* elf, size_t section, const Elf_Data* chunk)
      : elf_(elf), section_(section), chunk_(chunk) {}
  Elf* elf_;
  size_t section_;
  const Elf_Data* chunk_;
};

void append_path_list(std::string_view value, std::vector<std::string>& out) {
  for (std::string_view part : split(value, ':')) {
    if (!part.empty()) out.emplace_back(part);
  }
}

const char* tag_name(int64_t tag) {
  switch (tag) {
    case DT_NEEDED:
      return "DT_NEEDED";
    case DT_SONAME:
      return "DT_SONAME";
    case DT_RPATH:
      return "DT_RPATH";
    case DT_RUNPATH:
      return "DT_RUNPATH";
    default:
      return "dynamic";
  }
}

Result<DynamicInfo> collect(const ElfFile& file, Elf_Data* entries, const Strings& strings) {
  DynamicInfo info;
  GElf_Dyn dyn;
  // gelf_getdyn bounds-checks the index against the data size and returns null past the end.
  for (int i = 0; i < INT_MAX && gelf_getdyn(entries, i, &dyn) != nullptr; ++i) {
    const int64_t tag = dyn.d_tag;
    if (tag == DT_NULL) break;
    if (tag != DT_NEEDED && tag != DT_SONAME && tag != DT_RPATH && tag != DT_RUNPATH) continue;
    const char* text = strings.at(dyn.d_un.d_val);
    if (text == nullptr) {
      return fail(fmt::format("{}: {} entry names offset {} outside the dynamic string table",
                              file.name(), tag_name(tag), dyn.d_un.d_val));
    }
    switch (tag) {
      case DT_NEEDED:
        info.needed.emplace_back(text);
        break;
      case DT_SONAME:
        if (info.soname.empty()) info.soname = text;
        break;
      case DT_RPATH:
        append_path_list(text, info.rpath);
        break;
      default:
        append_path_list(text, info.runpath);
        break;
    }
  }
  return info;
}

// The SHT_GNU_verneed section: a chain of Verneed records, each with a chain of Vernaux.
// libelf bounds-checks each record against the section; the chains are followed only forward
// and at most kMaxRecords times, so a crafted loop ends.
Result<std::vector<VersionNeed>> version_needs_of(const ElfFile& file, Elf_Scn* scn,
                                                  const GElf_Shdr& shdr) {
  constexpr int kMaxRecords = 4096;
  std::vector<VersionNeed> out;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return fail(file.libelf_error("cannot read the version needs"));
  Strings strings = Strings::in_section(file.get(), shdr.sh_link);
  size_t offset = 0;
  for (int n = 0; n < kMaxRecords; ++n) {
    GElf_Verneed need;
    if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) {
      return fail(fmt::format("{}: a version need record lies outside its section", file.name()));
    }
    const char* name = strings.at(need.vn_file);
    if (name == nullptr) {
      return fail(fmt::format("{}: a version need names a string outside the string table",
                              file.name()));
    }
    VersionNeed entry{name, {}};
    size_t aux = offset + need.vn_aux;
    for (unsigned i = 0; i < need.vn_cnt && i < static_cast<unsigned>(kMaxRecords); ++i) {
      GElf_Vernaux vernaux;
      if (aux > static_cast<size_t>(INT_MAX) ||
          gelf_getvernaux(data, static_cast<int>(aux), &vernaux) == nullptr) {
        return fail(fmt::format("{}: a version need of {} lies outside its section",
                                file.name(), name));
      }
      const char* version = strings.at(vernaux.vna_name);
      if (version == nullptr) {
        return fail(fmt::format("{}: a version of {} names a string outside the string table",
                                file.name(), name));
      }
      entry.versions.emplace_back(version);
      if (vernaux.vna_next == 0) break;
      aux += vernaux.vna_next;
    }
    out.push_back(std::move(entry));
    if (need.vn_next == 0) break;
    offset += need.vn_next;
    if (offset > static_cast<size_t>(INT_MAX)) break;
  }
  return out;
}

// The usual route: the SHT_DYNAMIC section and the string table its sh_link names.
// Empty optional when the file has no such section.
Result<std::optional<DynamicInfo>> from_sections(const ElfFile& file) {
  Elf* elf = file.get();
  size_t count = 0;
  if (elf_getshdrnum(elf, &count) != 0) return fail(file.libelf_error("bad section count"));
  std::optional<DynamicInfo> found;
  std::optional<std::vector<VersionNeed>> needs;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      return fail(file.libelf_error("cannot read a section header"));
    }
    if (shdr.sh_type == SHT_GNU_verneed && !needs) {
      auto read = version_needs_of(file, scn, shdr);
      if (!read) return tl::unexpected(std::move(read.error()));
      needs = std::move(*read);
      continue;
    }
    if (shdr.sh_type != SHT_DYNAMIC || found) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) return fail(file.libelf_error("cannot read the dynamic section"));
    auto info = collect(file, data, Strings::in_section(elf, shdr.sh_link));
    if (!info) return tl::unexpected(std::move(info.error()));
    found = std::move(*info);
  }
  if (found && needs) found->version_needs = std::move(*needs);
  return found;
}

// The file offset of virtual address `vaddr`, through the PT_LOAD segment that maps it.
std::optional<uint64_t> file_offset_of(const std::vector<GElf_Phdr>& loads, uint64_t vaddr) {
  for (const GElf_Phdr& load : loads) {
    if (vaddr >= load.p_vaddr && vaddr - load.p_vaddr < load.p_filesz) {
      return load.p_offset + (vaddr - load.p_vaddr);
    }
  }
  return std::nullopt;
}

// For files whose section headers were removed: the loader itself only uses PT_DYNAMIC.
Result<DynamicInfo> from_segments(const ElfFile& file) {
  Elf* elf = file.get();
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return fail(file.libelf_error("bad program header count"));
  std::vector<GElf_Phdr> loads;
  std::optional<GElf_Phdr> dynamic;
  for (size_t i = 0; i < count && i < static_cast<size_t>(INT_MAX); ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) {
      return fail(file.libelf_error("cannot read a program header"));
    }
    if (phdr.p_type == PT_LOAD) loads.push_back(phdr);
    if (phdr.p_type == PT_DYNAMIC && !dynamic) dynamic = phdr;
  }
  if (!dynamic || dynamic->p_filesz == 0) return DynamicInfo{};
  if (dynamic->p_offset > static_cast<uint64_t>(INT64_MAX)) {
    return fail(fmt::format("{}: PT_DYNAMIC offset is out of range", file.name()));
  }
  Elf_Data* entries = elf_getdata_rawchunk(elf, static_cast<int64_t>(dynamic->p_offset),
                                           dynamic->p_filesz, ELF_T_DYN);
  if (entries == nullptr) return fail(file.libelf_error("cannot read PT_DYNAMIC"));

  std::optional<uint64_t> strtab_vaddr;
  uint64_t strtab_bytes = 0;
  GElf_Dyn dyn;
  for (int i = 0; i < INT_MAX && gelf_getdyn(entries, i, &dyn) != nullptr; ++i) {
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag == DT_STRTAB && !strtab_vaddr) strtab_vaddr = dyn.d_un.d_ptr;
    if (dyn.d_tag == DT_STRSZ) strtab_bytes = dyn.d_un.d_val;
  }
  Strings strings = Strings::none();
  if (strtab_vaddr && strtab_bytes > 0) {
    std::optional<uint64_t> offset = file_offset_of(loads, *strtab_vaddr);
    if (offset && *offset <= static_cast<uint64_t>(INT64_MAX)) {
      Elf_Data* chunk = elf_getdata_rawchunk(elf, static_cast<int64_t>(*offset),
                                             static_cast<size_t>(strtab_bytes), ELF_T_BYTE);
      if (chunk != nullptr) strings = Strings::in_chunk(chunk);
    }
  }
  return collect(file, entries, strings);
}

Result<DynamicInfo> dynamic_of(const ElfFile& file) {
  auto by_section = from_sections(file);
  if (!by_section) return tl::unexpected(std::move(by_section.error()));
  if (*by_section) return std::move(**by_section);
  return from_segments(file);
}

}  // namespace

Result<DynamicInfo> read_dynamic(const std::string& path) {
  return read_unless_changed(path, ElfFile::open, dynamic_of);
}

Result<DynamicInfo> parse_dynamic(const void* data, size_t size) {
  try {
    auto file = ElfFile::from_memory(data, size, "<memory>");
    if (!file) return tl::unexpected(std::move(file.error()));
    return dynamic_of(*file);
  } catch (const std::exception& e) {
    return fail(fmt::format("<memory>: {}", e.what()));
  }
}

}  // namespace sparkdoc::elf
