#include "elf/fatbin.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <utility>

#include "core/bytes.h"
#include "elf/byte_source.h"
#include "elf/cubin_source.h"
#include "elf/mapped_read.h"
#include "elf/sections.h"

namespace sparkdoc::elf {
namespace {

using bytes::Bytes;
using bytes::fits;

constexpr uint64_t kContainerHeaderBytes = 16;
constexpr uint64_t kScanStepBytes = 8;
constexpr uint32_t kShtNobits = 8;
constexpr uint16_t kEtRel = 1;
// Options are a short ptxas command line or a .nv.compat copy of tens of bytes; anything longer
// is a forged size.
constexpr uint64_t kMaxOptionsBytes = 1 << 20;
// Sections up to this size (most packages' fatbins) are read in one go rather than by header.
constexpr uint64_t kWholeSectionBytes = 64 << 10;

EntryKind kind_of(uint16_t code) {
  switch (code) {
    case 1:
      return EntryKind::kPtx;
    case 2:
      return EntryKind::kElf;
    case 8:
      return EntryKind::kLtoIr;
    default:
      return EntryKind::kUnknown;
  }
}

Compression compression_of(uint64_t flags) {
  if ((flags & kFatbinFlagZstd) != 0) return Compression::kZstd;
  if ((flags & kFatbinFlagLz4) != 0) return Compression::kLz4;
  return Compression::kNone;
}

std::string trimmed_text(Bytes text) {
  size_t length = text.size();
  while (length > 0 && text[length - 1] == std::byte{0}) --length;
  return std::string(reinterpret_cast<const char*>(text.data()), length);
}

// One entry whose header starts at `at`; everything it names must lie before `container_end`.
// `shift` turns source offsets into the offsets the caller reports.
Result<FatbinEntry> parse_entry(ByteSource& source, uint64_t at, uint64_t container_end,
                                uint64_t shift) {
  const uint64_t room = container_end - at;
  if (room < kFatbinEntryHeaderBytes) {
    return fail(
        fmt::format("entry header at offset {:#x} cut off: {} of {} bytes before the "
                    "container ends",
                    shift + at, room, kFatbinEntryHeaderBytes));
  }
  auto fetched = source.fetch(at, kFatbinEntryHeaderBytes);
  if (!fetched) return tl::unexpected(std::move(fetched.error()));
  const Bytes header = *fetched;
  FatbinEntry entry;
  entry.header_offset = shift + at;
  entry.kind_code = bytes::u16(header, 0x00);
  entry.kind = kind_of(entry.kind_code);
  entry.header_size_bytes = bytes::u32(header, 0x04);
  entry.payload_size_bytes = bytes::u64(header, 0x08);
  const uint32_t compressed_size = bytes::u32(header, 0x10);
  const uint32_t options_at = bytes::u32(header, 0x14);
  entry.version_minor = bytes::u16(header, 0x18);
  entry.version_major = bytes::u16(header, 0x1a);
  entry.arch = bytes::u32(header, 0x1c);
  entry.flags = bytes::u64(header, 0x28);
  const uint64_t uncompressed_size = bytes::u64(header, 0x38);

  if (entry.header_size_bytes < kFatbinEntryHeaderBytes) {
    return fail(fmt::format("entry at offset {:#x}: header size {} is below the {}-byte minimum",
                            shift + at, entry.header_size_bytes, kFatbinEntryHeaderBytes));
  }
  if (!fits(room, entry.header_size_bytes, entry.payload_size_bytes)) {
    return fail(
        fmt::format("entry at offset {:#x}: header ({} bytes) and payload ({} bytes) run "
                    "past the end of its container ({} bytes left)",
                    shift + at, entry.header_size_bytes, entry.payload_size_bytes, room));
  }
  const uint64_t payload_at = at + entry.header_size_bytes;
  entry.payload_offset = shift + payload_at;
  entry.arch_specific = (entry.flags & kFatbinFlagArchSpecific) != 0;
  entry.family_specific = (entry.flags & kFatbinFlagFamilySpecific) != 0;
  entry.compression = compression_of(entry.flags);
  if (entry.compression != Compression::kNone) {
    if (compressed_size > entry.payload_size_bytes) {
      return fail(
          fmt::format("entry at offset {:#x}: compressed size {} exceeds its {}-byte "
                      "payload",
                      shift + at, compressed_size, entry.payload_size_bytes));
    }
    entry.compressed_size_bytes = compressed_size;
    entry.uncompressed_size_bytes = uncompressed_size;
  }

  if (options_at != 0) {
    if (!fits(room, options_at, 8)) {
      return fail(
          fmt::format("entry at offset {:#x}: options descriptor at +{:#x} lies outside "
                      "its container",
                      shift + at, options_at));
    }
    auto descriptor = source.fetch(at + options_at, 8);
    if (!descriptor) return tl::unexpected(std::move(descriptor.error()));
    const uint32_t text_at = bytes::u32(*descriptor, 0);
    const uint32_t text_bytes = bytes::u32(*descriptor, 4);
    if (!fits(room, text_at, text_bytes) || text_bytes > kMaxOptionsBytes) {
      return fail(
          fmt::format("entry at offset {:#x}: options (+{:#x}, {} bytes) lie outside its "
                      "container",
                      shift + at, text_at, text_bytes));
    }
    auto options = source.fetch(at + text_at, text_bytes);
    if (!options) return tl::unexpected(std::move(options.error()));
    if (entry.kind != EntryKind::kElf) {
      entry.ptxas_options = trimmed_text(*options);
    } else if ((entry.flags & kFatbinFlagCompatCopy) != 0 && !options->empty()) {
      // fatbinary stores one zero byte, then the cubin's .nv.compat records (the copy is cut
      // one byte short of the section, which only ever loses the last record's tail).
      entry.header_compat_arch_specific =
          find_compat_attribute(options->subspan(1), kCompatArchSpecific);
    }
  }

  if (entry.kind == EntryKind::kElf && entry.compression == Compression::kNone) {
    auto cubin = inspect_cubin_at(source, payload_at, entry.payload_size_bytes);
    if (!cubin) {
      return fail(
          fmt::format("cubin at offset {:#x}: {}", entry.payload_offset, cubin.error().message));
    }
    entry.cubin = *cubin;
  }
  return entry;
}

// Where walked containers go, with the running counts that number them from the start of
// the file.
struct Walk {
  explicit Walk(const GpuCodeSink& to) : sink(to) {}
  const GpuCodeSink& sink;
  uint32_t containers = 0;
  uint32_t entries = 0;
  std::vector<FatbinEntry> buffer;  // the container being read; reused
};

// The containers in [begin, end) of `source`, each handed to walk.sink once read.
Result<void> walk_containers(ByteSource& source, uint64_t begin, uint64_t end,
                             FatbinSection section, uint64_t shift, Walk& walk) {
  if (end - begin <= kWholeSectionBytes) source.prefetch(begin, end - begin);
  uint64_t at = begin;
  while (end - at >= 4) {
    auto magic = source.fetch(at, 4);
    if (!magic) return tl::unexpected(std::move(magic.error()));
    if (bytes::u32(*magic, 0) != kFatbinMagic) {
      // Containers start 8-aligned in the file (the linker aligns them); a section may not.
      const uint64_t step = kScanStepBytes - (shift + at) % kScanStepBytes;
      at += std::min(step, end - at);
      continue;
    }
    if (end - at < kContainerHeaderBytes) {
      return fail(fmt::format("container header at offset {:#x} cut off: {} of {} bytes",
                              shift + at, end - at, kContainerHeaderBytes));
    }
    auto fetched = source.fetch(at, kContainerHeaderBytes);
    if (!fetched) return tl::unexpected(std::move(fetched.error()));
    FatbinContainer container;
    container.section = section;
    container.offset = shift + at;
    container.version = bytes::u16(*fetched, 4);
    container.header_size_bytes = bytes::u16(*fetched, 6);
    container.fat_size_bytes = bytes::u64(*fetched, 8);
    if (container.header_size_bytes < kContainerHeaderBytes) {
      return fail(fmt::format("container at offset {:#x}: header size {} is below {}", shift + at,
                              container.header_size_bytes, kContainerHeaderBytes));
    }
    if (!fits(end - at, container.header_size_bytes, container.fat_size_bytes)) {
      return fail(
          fmt::format("container at offset {:#x} claims {} bytes of entries; {} bytes "
                      "are left",
                      shift + at, container.fat_size_bytes, end - at));
    }
    container.first_entry = walk.entries;
    walk.buffer.clear();
    const uint64_t container_end = at + container.header_size_bytes + container.fat_size_bytes;
    uint64_t entry_at = at + container.header_size_bytes;
    while (entry_at < container_end) {
      auto entry = parse_entry(source, entry_at, container_end, shift);
      if (!entry) return tl::unexpected(std::move(entry.error()));
      entry->section = section;
      entry->container_index = walk.containers;
      entry_at += entry->header_size_bytes + entry->payload_size_bytes;
      walk.buffer.push_back(std::move(*entry));
    }
    container.entry_count = static_cast<uint32_t>(walk.buffer.size());
    walk.sink(&container, walk.buffer);
    ++walk.containers;
    walk.entries += container.entry_count;
    at = container_end;
  }
  return {};
}

// A sink that keeps everything, for the readers that return a whole GpuCode.
GpuCodeSink collect_into(GpuCode& code) {
  return [&code](const FatbinContainer* container, std::span<const FatbinEntry> entries) {
    if (container != nullptr) code.containers.push_back(*container);
    code.entries.insert(code.entries.end(), entries.begin(), entries.end());
  };
}

uint16_t u16_in_order(Bytes data, uint64_t at, bool big_endian) {
  const uint16_t little = bytes::u16(data, at);
  return big_endian ? static_cast<uint16_t>((little >> 8) | (little << 8)) : little;
}

Result<void> bare_cubin(ByteSource& source, std::string_view name, const GpuCodeSink& sink) {
  auto cubin = inspect_cubin_at(source, 0, source.size(), /*read_build_note=*/true);
  if (!cubin) return fail(fmt::format("{}: {}", name, cubin.error().message));
  FatbinEntry entry;
  entry.section = FatbinSection::kCubinFile;
  entry.payload_size_bytes = source.size();
  entry.kind_code = 2;
  entry.kind = EntryKind::kElf;
  entry.arch = cubin->sm;
  entry.arch_specific = cubin->arch_specific;
  // No header says 'f' for a bare cubin: its build note does (cubin.h).
  entry.family_specific = cubin->family_specific();
  entry.cubin = *cubin;
  sink(nullptr, std::span<const FatbinEntry>(&entry, 1));
  return {};
}

// `sections` reads the section table of the host ELF file behind `source`: through libelf on
// the path for files, on the bytes for images in memory.
template <class SectionReader>
Result<GpuFileKind> scan(ByteSource& source, std::string_view name, SectionReader&& sections,
                         const GpuCodeSink& sink) {
  const uint64_t size = source.size();
  auto head = source.fetch(0, std::min<uint64_t>(size, 20));
  if (!head) return fail(fmt::format("{}: {}", name, head.error().message));
  const Bytes ident = *head;
  Walk walk(sink);
  if (fits(ident.size(), 0, 4) && bytes::u32(ident, 0) == kFatbinMagic) {
    auto walked = walk_containers(source, 0, size, FatbinSection::kFatbinFile, 0, walk);
    if (!walked) return fail(fmt::format("{}: {}", name, walked.error().message));
    return GpuFileKind::kFatbin;
  }
  if (!fits(ident.size(), 0, 20) || bytes::u32(ident, 0) != 0x464c457f) {
    return fail(fmt::format("{}: not an ELF, fatbin or cubin file", name));
  }
  const bool big_endian = bytes::u8(ident, 5) == 2;
  if (u16_in_order(ident, 0x12, big_endian) == kEmCuda) {
    auto read = bare_cubin(source, name, sink);
    if (!read) return tl::unexpected(std::move(read.error()));
    return GpuFileKind::kCubin;
  }
  const GpuFileKind kind = u16_in_order(ident, 0x10, big_endian) == kEtRel
                               ? GpuFileKind::kRelocatableElf
                               : GpuFileKind::kLinkedElf;

  auto table = sections();
  if (!table) return tl::unexpected(std::move(table.error()));
  for (const SectionInfo& info : *table) {
    FatbinSection section;
    if (info.name == ".nv_fatbin") {
      section = FatbinSection::kNvFatbin;
    } else if (info.name == "__nv_relfatbin") {
      section = FatbinSection::kNvRelfatbin;
    } else {
      continue;
    }
    if (info.type == kShtNobits) continue;
    if (!fits(size, info.file_offset, info.size_bytes)) {
      return fail(
          fmt::format("{}: section {} (offset {:#x}, {} bytes) lies beyond the end of the "
                      "{}-byte file",
                      name, info.name, info.file_offset, info.size_bytes, size));
    }
    auto walked = walk_containers(source, info.file_offset, info.file_offset + info.size_bytes,
                                  section, 0, walk);
    if (!walked) return fail(fmt::format("{}: {}: {}", name, info.name, walked.error().message));
  }
  return kind;
}

// scan() into one GpuCode.
template <class SectionReader>
Result<GpuCode> gpu_code_of(ByteSource& source, std::string_view name, SectionReader&& sections) {
  GpuCode code;
  auto kind = scan(source, name, std::forward<SectionReader>(sections), collect_into(code));
  if (!kind) return tl::unexpected(std::move(kind.error()));
  code.file_kind = *kind;
  return code;
}

}  // namespace

bool FatbinEntry::elf_arch_specific() const {
  if (cubin) return cubin->arch_specific;
  return arch_specific || header_compat_arch_specific == 1u;
}

uint32_t FatbinEntry::elf_sm() const {
  return cubin ? cubin->sm : arch;
}

Result<GpuCode> parse_fatbin_section(std::span<const std::byte> bytes, FatbinSection section,
                                     uint64_t base_offset) {
  try {
    MemorySource source(bytes);
    GpuCode code;
    code.file_kind = GpuFileKind::kFatbin;
    GpuCodeSink sink = collect_into(code);
    Walk walk(sink);
    auto walked = walk_containers(source, 0, bytes.size(), section, base_offset, walk);
    if (!walked) return tl::unexpected(std::move(walked.error()));
    return code;
  } catch (const std::exception& e) {
    return fail(fmt::format("fatbin: {}", e.what()));
  }
}

Result<GpuCode> parse_fatbin_section(const void* data, size_t size, FatbinSection section,
                                     uint64_t base_offset) {
  if (data == nullptr) size = 0;
  return parse_fatbin_section(std::span(static_cast<const std::byte*>(data), size), section,
                              base_offset);
}

Result<GpuCode> read_gpu_code(const std::string& path) {
  return read_unless_changed(path, FileSource::open, [&](FileSource& file) {
    return gpu_code_of(file, path, [&] { return read_sections(path); });
  });
}

Result<GpuFileKind> scan_gpu_code(const std::string& path, const GpuCodeSink& sink) {
  return read_unless_changed(path, FileSource::open, [&](FileSource& file) {
    auto sections = [&] { return read_sections(path); };
    return scan(file, path, sections, sink);
  });
}

Result<GpuCode> parse_gpu_code(std::span<const std::byte> image, std::string_view name) {
  try {
    MemorySource source(image);
    return gpu_code_of(source, name, [&] { return parse_sections(image.data(), image.size()); });
  } catch (const std::exception& e) {
    return fail(fmt::format("{}: {}", name, e.what()));
  }
}

std::string_view section_name(FatbinSection section) {
  switch (section) {
    case FatbinSection::kNvFatbin:
      return ".nv_fatbin";
    case FatbinSection::kNvRelfatbin:
      return "__nv_relfatbin";
    case FatbinSection::kFatbinFile:
      return "fatbin";
    case FatbinSection::kCubinFile:
      return "cubin";
  }
  return "?";
}

std::string_view kind_name(EntryKind kind) {
  switch (kind) {
    case EntryKind::kPtx:
      return "ptx";
    case EntryKind::kElf:
      return "elf";
    case EntryKind::kLtoIr:
      return "lto-ir";
    case EntryKind::kUnknown:
      return "unknown";
  }
  return "?";
}

Result<std::vector<std::byte>> decompress_lz4_block(std::span<const std::byte> compressed,
                                                    uint64_t uncompressed_size_bytes) {
  const uint64_t in_size = compressed.size();
  const uint64_t out_size = uncompressed_size_bytes;
  // A sequence turns at most one input byte into 255 output bytes (a run of 0xff length
  // bytes), so anything larger is a forged size, refused before allocating.
  if (out_size / 255 > in_size + 1) {
    return fail(fmt::format("LZ4: {} bytes cannot decode to {} bytes", in_size, out_size));
  }
  std::vector<std::byte> out;
  if (in_size == 0 && out_size == 0) return out;
  out.reserve(static_cast<size_t>(out_size));
  uint64_t at = 0;
  const auto length_extension = [&](uint64_t& length) -> bool {
    uint8_t more = 255;
    while (more == 255) {
      if (at >= in_size) return false;
      more = bytes::u8(compressed, at++);
      length += more;
    }
    return true;
  };
  for (;;) {
    if (at >= in_size) return fail(fmt::format("LZ4: block ends inside a sequence at {}", at));
    const uint8_t token = bytes::u8(compressed, at++);
    uint64_t literal_bytes = token >> 4;
    if (literal_bytes == 15 && !length_extension(literal_bytes)) {
      return fail("LZ4: literal length cut off");
    }
    if (literal_bytes > in_size - at || literal_bytes > out_size - out.size()) {
      return fail(fmt::format("LZ4: {} literal bytes at {} overrun the input or the output",
                              literal_bytes, at));
    }
    out.insert(out.end(), compressed.begin() + static_cast<std::ptrdiff_t>(at),
               compressed.begin() + static_cast<std::ptrdiff_t>(at + literal_bytes));
    at += literal_bytes;
    // The last sequence of a block is literals only.
    if (at == in_size) break;
    if (in_size - at < 2) return fail(fmt::format("LZ4: match offset cut off at {}", at));
    const uint64_t distance = bytes::u16(compressed, at);
    at += 2;
    if (distance == 0 || distance > out.size()) {
      return fail(fmt::format("LZ4: match distance {} at {} reaches before the output start",
                              distance, at - 2));
    }
    uint64_t match_bytes = token & 0x0f;
    if (match_bytes == 15 && !length_extension(match_bytes)) {
      return fail("LZ4: match length cut off");
    }
    match_bytes += 4;
    if (match_bytes > out_size - out.size()) {
      return fail(fmt::format("LZ4: {}-byte match at {} overruns the output", match_bytes, at));
    }
    // Byte by byte: a match may overlap the bytes it is producing (distance < length).
    const size_t from = out.size() - static_cast<size_t>(distance);
    for (uint64_t i = 0; i < match_bytes; ++i) out.push_back(out[from + static_cast<size_t>(i)]);
  }
  if (out.size() != out_size) {
    return fail(fmt::format("LZ4: decoded {} bytes, expected {}", out.size(), out_size));
  }
  return out;
}

}  // namespace sparkdoc::elf
