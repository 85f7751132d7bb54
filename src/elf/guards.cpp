#include "elf/guards.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/bytes.h"
#include "elf/byte_source.h"
#include "elf/targets.h"

namespace sparkdoc::elf {
namespace {

// The stored bytes of an entry's payload: the exact stream when compressed, else the padded
// payload (padding is zeros and cannot complete the guard's text).
uint64_t stored_bytes(const FatbinEntry& entry) {
  return entry.compression == Compression::kNone ? entry.payload_size_bytes
                                                 : entry.compressed_size_bytes;
}

bool holds_guard_text(std::span<const std::byte> cubin) {
  if (cubin.size() < kSm120OnlyGuardText.size()) return false;  // and never memmem(nullptr)
  return ::memmem(cubin.data(), cubin.size(), kSm120OnlyGuardText.data(),
                  kSm120OnlyGuardText.size()) != nullptr;
}

// Finds the guard's text in bytes given piece by piece, across the pieces' seams.
class TextFinder {
 public:
  void feed(std::span<const std::byte> piece) {
    if (found_ || piece.empty()) return;
    const size_t keep = kSm120OnlyGuardText.size() - 1;
    // The seam: the last bytes before this piece and its first ones.
    std::vector<std::byte> seam = tail_;
    seam.insert(seam.end(), piece.begin(), piece.begin() + std::min(keep, piece.size()));
    found_ = holds_guard_text(seam) || holds_guard_text(piece);
    if (piece.size() >= keep) {
      tail_.assign(piece.end() - static_cast<std::ptrdiff_t>(keep), piece.end());
    } else {
      tail_.insert(tail_.end(), piece.begin(), piece.end());
      if (tail_.size() > keep) tail_.erase(tail_.begin(), tail_.end() - static_cast<std::ptrdiff_t>(keep));
    }
  }
  bool found() const { return found_; }

 private:
  std::vector<std::byte> tail_;
  bool found_ = false;
};

// Pieces of this size are fetched and decoded at a time: memory stays at two of them per
// thread however large the cubin.
constexpr uint64_t kPieceBytes = 64 << 10;

Result<bool> stored_holds_guard(ByteSource& source, const FatbinEntry& entry) {
  TextFinder finder;
  for (uint64_t at = 0; at < entry.payload_size_bytes && !finder.found(); at += kPieceBytes) {
    auto piece = source.fetch(entry.payload_offset + at,
                              std::min(kPieceBytes, entry.payload_size_bytes - at));
    if (!piece) return tl::unexpected(piece.error());
    finder.feed(*piece);
  }
  return finder.found();
}

// The zstd stream decoded a piece at a time, each decoded piece handed to `sink`; all of it,
// so that a damaged stream is an error whether or not the text came before the damage. The one
// zstd decoder here: memory stays at a piece of input and one of output per call, however large
// the cubin says it is (the whole payload for entry_payload, which only tests and the fuzzer
// ask for).
template <class Sink>
Result<void> decode_zstd(ByteSource& source, const FatbinEntry& entry, Sink sink) {
  const uint64_t stored = entry.compressed_size_bytes;
  const uint64_t size_bytes = entry.uncompressed_size_bytes;
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(),
                                                                     &ZSTD_freeDStream);
  if (stream == nullptr) return fail("zstd: out of memory");
  std::vector<std::byte> out(kPieceBytes);
  uint64_t decoded = 0;
  size_t rc = 1;  // 0 once the frame is complete
  for (uint64_t at = 0; at < stored && rc != 0;) {
    auto piece = source.fetch(entry.payload_offset + at, std::min(kPieceBytes, stored - at));
    if (!piece) return tl::unexpected(piece.error());
    ZSTD_inBuffer in{piece->data(), piece->size(), 0};
    while (in.pos < in.size && rc != 0) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      rc = ZSTD_decompressStream(stream.get(), &o, &in);
      if (ZSTD_isError(rc) != 0) {
        return fail(fmt::format("the cubin at {:#x}: zstd: {}", entry.payload_offset,
                                ZSTD_getErrorName(rc)));
      }
      decoded += o.pos;
      if (decoded > size_bytes) break;
      sink(std::span<const std::byte>(out).first(o.pos));
    }
    at += in.pos;
    if (in.pos == 0 || decoded > size_bytes) break;
  }
  // The frame may end with output still held back: drained with no input.
  while (rc != 0 && decoded <= size_bytes) {
    ZSTD_inBuffer in{nullptr, 0, 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    rc = ZSTD_decompressStream(stream.get(), &o, &in);
    if (ZSTD_isError(rc) != 0 || o.pos == 0) break;
    decoded += o.pos;
    if (decoded > size_bytes) break;
    sink(std::span<const std::byte>(out).first(o.pos));
  }
  if (rc != 0 || decoded != size_bytes) {
    return fail(fmt::format("the cubin at {:#x}: zstd: {} bytes decoded{}, the header says {}",
                            entry.payload_offset, decoded, rc != 0 ? " of a frame cut short" : "",
                            size_bytes));
  }
  return {};
}

Result<bool> zstd_holds_guard(ByteSource& source, const FatbinEntry& entry) {
  TextFinder finder;
  auto decoded = decode_zstd(source, entry,
                             [&finder](std::span<const std::byte> piece) { finder.feed(piece); });
  if (!decoded) return tl::unexpected(decoded.error());
  return finder.found();
}

Result<std::vector<std::byte>> read_payload(ByteSource& source, const FatbinEntry& entry) {
  const uint64_t size = entry.compression == Compression::kNone ? entry.payload_size_bytes
                                                                : entry.uncompressed_size_bytes;
  if (size > kMaxCubinBytes || stored_bytes(entry) > kMaxCubinBytes) {
    return fail(fmt::format("the cubin at {:#x} says it holds {} bytes, more than a cubin does",
                            entry.payload_offset, size));
  }
  if (entry.compression == Compression::kZstd) {
    std::vector<std::byte> out;
    auto decoded = decode_zstd(source, entry, [&out](std::span<const std::byte> piece) {
      out.insert(out.end(), piece.begin(), piece.end());
    });
    if (!decoded) return tl::unexpected(decoded.error());
    return out;
  }
  auto stored = source.fetch(entry.payload_offset, stored_bytes(entry));
  if (!stored) return tl::unexpected(stored.error());
  if (entry.compression == Compression::kNone) {
    return std::vector<std::byte>(stored->begin(), stored->end());
  }
  auto payload = decompress_lz4_block(*stored, entry.uncompressed_size_bytes);
  if (!payload) {
    return fail(
        fmt::format("the cubin at {:#x}: {}", entry.payload_offset, payload.error().message));
  }
  return payload;
}

Result<bool> holds_guard(ByteSource& source, const FatbinEntry& entry) {
  switch (entry.compression) {
    case Compression::kNone:
      return stored_holds_guard(source, entry);
    case Compression::kZstd:
      return zstd_holds_guard(source, entry);
    case Compression::kLz4: {  // a raw block decodes whole; LZ4 is -compress-mode=speed's only
      auto cubin = read_payload(source, entry);
      if (!cubin) return tl::unexpected(cubin.error());
      return holds_guard_text(*cubin);
    }
  }
  return fail("unknown compression");
}

Result<std::vector<audit::GpuTarget>> guarded_targets(ByteSource& source,
                                                      std::span<const FatbinEntry> entries) {
  std::vector<audit::GpuTarget> out;
  for (const FatbinEntry& entry : entries) {
    if (!may_hold_sm120_only_guard(entry)) continue;
    auto holds = holds_guard(source, entry);
    if (!holds) return tl::unexpected(holds.error());
    const audit::GpuTarget target = entry_target(entry);
    if (*holds && std::find(out.begin(), out.end(), target) == out.end()) out.push_back(target);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool may_hold_sm120_only_guard(const FatbinEntry& entry) {
  return entry.kind == EntryKind::kElf && entry.arch > 120 && entry.arch < 130;
}

Result<std::vector<std::byte>> entry_payload(std::span<const std::byte> image,
                                             const FatbinEntry& entry) {
  MemorySource source(image);
  return read_payload(source, entry);
}

GuardScanner::GuardScanner(std::string path) : path_(std::move(path)) {}
GuardScanner::GuardScanner(GuardScanner&&) noexcept = default;
GuardScanner& GuardScanner::operator=(GuardScanner&&) noexcept = default;
GuardScanner::~GuardScanner() = default;

Result<std::vector<audit::GpuTarget>> GuardScanner::sm120_only_targets(
    std::span<const FatbinEntry> entries) {
  if (std::none_of(entries.begin(), entries.end(), may_hold_sm120_only_guard)) return {};
  if (source_ == nullptr) {
    auto opened = FileSource::open(path_);
    if (!opened) return tl::unexpected(opened.error());
    source_ = std::make_unique<FileSource>(std::move(*opened));
  }
  return guarded_targets(*source_, entries);
}

Result<std::vector<audit::GpuTarget>> sm120_only_targets(std::span<const std::byte> image,
                                                         std::span<const FatbinEntry> entries) {
  MemorySource source(image);
  return guarded_targets(source, entries);
}

}  // namespace sparkdoc::elf
