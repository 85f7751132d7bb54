#include "elf/cubin.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "elf/byte_source.h"
#include "elf/cubin_source.h"

namespace sparkdoc::elf {
namespace {

using bytes::Bytes;
using bytes::fits;

constexpr uint32_t kV1SmMask = 0xff;
constexpr uint32_t kV1Accelerators = 0x800;
constexpr uint32_t kV2SmShift = 8;
constexpr uint32_t kV2Accelerators = 0x8;
constexpr uint64_t kShfExecinstr = 0x4;
// Far above any real cubin (a few hundred sections, a .nv.compat of tens of bytes), low enough
// that a forged size cannot make the reader allocate without limit.
constexpr uint64_t kMaxTableBytes = 16 << 20;

// Where the fields this reader needs sit in each ELF class.
struct Layout {
  uint64_t header_bytes;
  uint64_t shoff_at;
  uint64_t flags_at;
  uint64_t shentsize_at;
  uint64_t shnum_at;
  uint64_t section_header_bytes;
  uint64_t sh_flags_at;
  uint64_t sh_offset_at;
  uint64_t sh_size_at;
  bool wide;  // addresses and offsets are 8 bytes
};

constexpr Layout kElf64{64, 0x28, 0x30, 0x3a, 0x3c, 64, 0x08, 0x18, 0x20, true};
constexpr Layout kElf32{52, 0x20, 0x24, 0x2e, 0x30, 40, 0x08, 0x10, 0x14, false};

uint64_t word(Bytes data, uint64_t at, const Layout& layout) {
  return layout.wide ? bytes::u64(data, at) : bytes::u32(data, at);
}

struct SectionHeader {
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

SectionHeader section_at(Bytes image, uint64_t at, const Layout& layout) {
  SectionHeader header;
  header.type = bytes::u32(image, at + 4);
  header.flags = word(image, at + layout.sh_flags_at, layout);
  header.offset = word(image, at + layout.sh_offset_at, layout);
  header.size = word(image, at + layout.sh_size_at, layout);
  return header;
}

bool is_sm_target(std::string_view token) {
  if (!token.starts_with("sm_") || token.size() < 5) return false;
  size_t digits = 0;
  while (3 + digits < token.size() && token[3 + digits] >= '0' && token[3 + digits] <= '9') {
    ++digits;
  }
  if (digits < 2) return false;
  std::string_view rest = token.substr(3 + digits);
  return rest.empty() || rest == "a" || rest == "f";
}

}  // namespace

bool CubinInfo::family_specific() const {
  return !arch_specific && build_arch == fmt::format("sm_{}f", sm);
}

std::string tkinfo_build_arch(std::span<const std::byte> desc) {
  std::string_view text(reinterpret_cast<const char*>(desc.data()), desc.size());
  // Every string of the descriptor, split at NULs and then at blanks: the option and its value
  // are two words ("-arch sm_121f") or one ("-arch=sm_121f", "--gpu-name=sm_121f").
  bool next_is_value = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find_first_of(std::string_view("\0 \t", 3), at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (next_is_value) {
      if (is_sm_target(word)) return std::string(word);
      next_is_value = false;
    }
    if (word == "-arch" || word == "--gpu-name" || word == "-gpu-name") {
      next_is_value = true;
      continue;
    }
    for (std::string_view option : {"-arch=", "--gpu-name=", "-gpu-name="}) {
      if (word.starts_with(option) && is_sm_target(word.substr(option.size()))) {
        return std::string(word.substr(option.size()));
      }
    }
  }
  return "";
}

std::string notes_build_arch(std::span<const std::byte> notes) {
  constexpr std::string_view kOwner("NVIDIA Corp\0", 12);
  uint64_t at = 0;
  const uint64_t size = notes.size();
  auto padded = [](uint64_t n) { return (n + 3) / 4 * 4; };
  while (fits(size, at, 12)) {
    const uint64_t name_bytes = bytes::u32(notes, at);
    const uint64_t desc_bytes = bytes::u32(notes, at + 4);
    const uint32_t type = bytes::u32(notes, at + 8);
    const uint64_t name_at = at + 12;
    if (!fits(size, name_at, padded(name_bytes))) return "";
    const uint64_t desc_at = name_at + padded(name_bytes);
    if (!fits(size, desc_at, desc_bytes)) return "";
    std::string_view name(reinterpret_cast<const char*>(notes.data() + name_at), name_bytes);
    if (type == kNoteNvToolkitInfo && name == kOwner) {
      return tkinfo_build_arch(notes.subspan(desc_at, desc_bytes));
    }
    if (!fits(size, desc_at, padded(desc_bytes))) return "";
    at = desc_at + padded(desc_bytes);
  }
  return "";
}

std::optional<uint32_t> find_compat_attribute(std::span<const std::byte> records,
                                              uint8_t attribute) {
  uint64_t at = 0;
  const uint64_t size = records.size();
  while (fits(size, at, 2)) {
    const uint8_t format = bytes::u8(records, at);
    const uint8_t attr = bytes::u8(records, at + 1);
    std::optional<uint32_t> value;
    uint64_t record_bytes = 0;
    switch (format) {
      case 1:
        record_bytes = 2;
        value = 0;
        break;
      case 2:
        record_bytes = 4;
        if (fits(size, at, 3)) value = bytes::u8(records, at + 2);
        break;
      case 3:
        record_bytes = 4;
        if (fits(size, at, 4)) value = bytes::u16(records, at + 2);
        break;
      case 4:
        // The value of a blob attribute is its length; no caller needs the bytes yet.
        if (!fits(size, at, 4)) return std::nullopt;
        value = bytes::u16(records, at + 2);
        record_bytes = 4 + uint64_t{*value};
        break;
      default:
        return std::nullopt;
    }
    if (attr == attribute) return value;
    at += record_bytes;
  }
  return std::nullopt;
}

Result<CubinInfo> inspect_cubin_at(ByteSource& source, uint64_t at, uint64_t size,
                                   bool read_build_note) {
  if (!fits(source.size(), at, size)) {
    return fail(fmt::format("{}-byte cubin at offset {:#x} lies beyond the end", size, at));
  }
  // The ELF header: the fields below are copied out before the next fetch.
  const uint64_t header_bytes = std::min<uint64_t>(size, kElf64.header_bytes);
  auto header = source.fetch(at, header_bytes);
  if (!header) return tl::unexpected(std::move(header.error()));
  const Bytes ehdr = *header;
  if (!fits(ehdr.size(), 0, 16) || bytes::u32(ehdr, 0) != 0x464c457f) {
    return fail("not an ELF image");
  }
  const uint8_t elf_class = bytes::u8(ehdr, 4);
  if (elf_class != 1 && elf_class != 2) {
    return fail(fmt::format("unknown ELF class {} at offset 0x4", elf_class));
  }
  if (bytes::u8(ehdr, 5) != 1) return fail("not a little-endian ELF image (offset 0x5)");
  const Layout& layout = elf_class == 2 ? kElf64 : kElf32;
  if (!fits(ehdr.size(), 0, layout.header_bytes)) {
    return fail(fmt::format("ELF header cut off: {} of {} bytes", size, layout.header_bytes));
  }
  const uint16_t machine = bytes::u16(ehdr, 0x12);
  if (machine != kEmCuda) {
    return fail(fmt::format("e_machine {} at offset 0x12 is not EM_CUDA (190)", machine));
  }

  CubinInfo info;
  info.os_abi = bytes::u8(ehdr, 7);
  info.abi_version = bytes::u8(ehdr, 8);
  info.elf_type = bytes::u16(ehdr, 0x10);
  info.e_flags = bytes::u32(ehdr, layout.flags_at);
  // LLVM spells ELFOSABI_CUDA_V2 as decimal 41 while every ABI v8 cubin carries 0x41: accept both.
  const bool abi_v8 = info.abi_version >= 8 || info.os_abi == 0x41 || info.os_abi == 41;
  if (abi_v8) {
    info.sm = (info.e_flags >> kV2SmShift) & 0xff;
    info.accelerators_flag = (info.e_flags & kV2Accelerators) != 0;
  } else {
    info.sm = info.e_flags & kV1SmMask;
    info.accelerators_flag = (info.e_flags & kV1Accelerators) != 0;
  }
  const uint64_t shoff = word(ehdr, layout.shoff_at, layout);
  const uint64_t shentsize = bytes::u16(ehdr, layout.shentsize_at);
  uint64_t shnum = shoff == 0 ? 0 : bytes::u16(ehdr, layout.shnum_at);

  if (shoff != 0) {
    if (shentsize < layout.section_header_bytes) {
      return fail(fmt::format("section header size {} at offset {:#x} is too small", shentsize,
                              layout.shentsize_at));
    }
    if (!fits(size, shoff, layout.section_header_bytes)) {
      return fail(
          fmt::format("section headers at offset {:#x} lie beyond the {}-byte image", shoff, size));
    }
    // ELF extended numbering: 0 in e_shnum means the count is section 0's sh_size.
    if (shnum == 0) {
      auto first = source.fetch(at + shoff, layout.section_header_bytes);
      if (!first) return tl::unexpected(std::move(first.error()));
      shnum = section_at(*first, 0, layout).size;
    }
    if (shnum > (size - shoff) / shentsize || shnum * shentsize > kMaxTableBytes) {
      return fail(fmt::format("{} section headers at offset {:#x} do not fit in the {}-byte image",
                              shnum, shoff, size));
    }
  }

  std::optional<SectionHeader> compat;
  std::vector<SectionHeader> notes;
  if (shnum > 1) {
    auto table = source.fetch(at + shoff, shnum * shentsize);
    if (!table) return tl::unexpected(std::move(table.error()));
    for (uint64_t i = 1; i < shnum; ++i) {
      const SectionHeader section = section_at(*table, i * shentsize, layout);
      if ((section.flags & kShfExecinstr) != 0 && section.size > 0) info.has_code = true;
      if (section.type == kShtCudaCompat && !compat) compat = section;
      if (read_build_note && section.type == kShtNote && notes.size() < 8) {
        notes.push_back(section);
      }
    }
  }
  // A note outside the image is no error: the note is informational and cuobjdump ignores it.
  for (const SectionHeader& note : notes) {
    if (!fits(size, note.offset, note.size) || note.size > kMaxTableBytes) continue;
    auto bytes = source.fetch(at + note.offset, note.size);
    if (!bytes) return tl::unexpected(std::move(bytes.error()));
    info.build_arch = notes_build_arch(*bytes);
    if (!info.build_arch.empty()) break;
  }
  if (compat) {
    if (!fits(size, compat->offset, compat->size) || compat->size > kMaxTableBytes) {
      return fail(fmt::format(".nv.compat at offset {:#x} ({} bytes) lies beyond the {}-byte image",
                              compat->offset, compat->size, size));
    }
    auto records = source.fetch(at + compat->offset, compat->size);
    if (!records) return tl::unexpected(std::move(records.error()));
    info.compat_arch_specific = find_compat_attribute(*records, kCompatArchSpecific);
  }

  info.arch_specific =
      abi_v8 ? info.accelerators_flag || info.compat_arch_specific == 1u : info.accelerators_flag;
  return info;
}

Result<CubinInfo> inspect_cubin(std::span<const std::byte> image, bool read_build_note) {
  try {
    MemorySource source(image);
    return inspect_cubin_at(source, 0, image.size(), read_build_note);
  } catch (const std::exception& e) {
    return fail(fmt::format("cubin: {}", e.what()));
  }
}

}  // namespace sparkdoc::elf
