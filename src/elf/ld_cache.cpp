#include "elf/ld_cache.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>

namespace sparkdoc::elf {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr size_t kOldHeader = 16;  // 11 magic bytes, padding, u32 nlibs
constexpr size_t kOldEntry = 12;
constexpr size_t kNewHeader = 48;
constexpr size_t kNewEntry = 24;

template <class T>
T load(std::string_view bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The NUL-terminated string at `offset` of `table`, or nullopt when it does not end inside it.
std::optional<std::string> string_at(std::string_view table, uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  size_t end = table.find('\0', static_cast<size_t>(offset));
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(table.substr(static_cast<size_t>(offset), end - offset));
}

Result<std::vector<LdCacheEntry>> parse_new(std::string_view bytes) {
  if (bytes.size() < kNewHeader) return fail("ld.so.cache: truncated header");
  uint32_t count = load<uint32_t>(bytes, 20);
  if (count > (bytes.size() - kNewHeader) / kNewEntry) {
    return fail(fmt::format("ld.so.cache: {} entries do not fit in {} bytes", count,
                            bytes.size()));
  }
  std::vector<LdCacheEntry> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    size_t at = kNewHeader + size_t{i} * kNewEntry;
    LdCacheEntry entry;
    entry.flags = load<int32_t>(bytes, at);
    auto soname = string_at(bytes, load<uint32_t>(bytes, at + 4));
    auto path = string_at(bytes, load<uint32_t>(bytes, at + 8));
    if (!soname || !path) {
      return fail(fmt::format("ld.so.cache: entry {}'s name lies outside the file", i));
    }
    entry.soname = std::move(*soname);
    entry.path = std::move(*path);
    entry.hwcap = load<uint64_t>(bytes, at + 16);
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<LdCacheEntry>> parse_old(std::string_view bytes) {
  if (bytes.size() < kOldHeader) return fail("ld.so.cache: truncated header");
  uint32_t count = load<uint32_t>(bytes, 12);
  if (count > (bytes.size() - kOldHeader) / kOldEntry) {
    return fail(fmt::format("ld.so.cache: {} entries do not fit in {} bytes", count,
                            bytes.size()));
  }
  size_t entries_end = kOldHeader + size_t{count} * kOldEntry;
  // A new-format table after the old one is what current loaders read.
  size_t aligned = (entries_end + 7) & ~size_t{7};
  if (aligned < bytes.size() && bytes.substr(aligned).starts_with(kNewMagic)) {
    return parse_new(bytes.substr(aligned));
  }
  std::string_view strings = bytes.substr(entries_end);
  std::vector<LdCacheEntry> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    size_t at = kOldHeader + size_t{i} * kOldEntry;
    auto soname = string_at(strings, load<uint32_t>(bytes, at + 4));
    auto path = string_at(strings, load<uint32_t>(bytes, at + 8));
    if (!soname || !path) {
      return fail(fmt::format("ld.so.cache: entry {}'s name lies outside the file", i));
    }
    out.push_back(LdCacheEntry{load<int32_t>(bytes, at), std::move(*soname), std::move(*path), 0});
  }
  return out;
}

}  // namespace

int32_t host_ld_cache_flags() {
#if defined(__x86_64__)
  return kLdCacheX86_64;
#elif defined(__aarch64__)
  return kLdCacheAArch64;
#else
  return 0;
#endif
}

Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view bytes) {
  if (bytes.starts_with(kNewMagic)) return parse_new(bytes);
  if (bytes.starts_with(kOldMagic)) return parse_old(bytes);
  return fail("ld.so.cache: not an ld.so.cache (unknown magic)");
}

Result<std::vector<LdCacheEntry>> read_ld_cache(const Root& root) {
  const std::string path = root.path("/etc/ld.so.cache");
  auto bytes = read_text(path, 64 << 20);
  if (!bytes) return tl::unexpected(std::move(bytes.error()));
  return parse_ld_cache(*bytes);
}

}  // namespace sparkdoc::elf
