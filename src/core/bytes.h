// Little-endian numbers in bytes, whatever the host's byte order: bounded reads over untrusted
// bytes (the fatbin and cubin readers, the audit's cache) and the writes that make them (the
// audit's cache). Every read states its range first through fits(); the loads themselves
// assume the range was checked, so a missed check is a bug the fuzzer finds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

namespace sparkdoc::bytes {

using Bytes = std::span<const std::byte>;

// Whether [offset, offset + length) lies inside a buffer of `size` bytes, without overflow.
inline bool fits(uint64_t size, uint64_t offset, uint64_t length) {
  return offset <= size && length <= size - offset;
}

// Assembled byte by byte so that the result does not depend on the host's byte order or on
// the alignment of `at` (fatbin entries inside an ELF section are only 8-byte aligned, and
// cubin fields in a truncated image may be anywhere).
template <class T>
T load_le(Bytes data, uint64_t at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(static_cast<T>(data[at + i]) << (8 * i)));
  }
  return value;
}

inline uint8_t u8(Bytes data, uint64_t at) {
  return static_cast<uint8_t>(data[at]);
}
inline uint16_t u16(Bytes data, uint64_t at) {
  return load_le<uint16_t>(data, at);
}
inline uint32_t u32(Bytes data, uint64_t at) {
  return load_le<uint32_t>(data, at);
}
inline uint64_t u64(Bytes data, uint64_t at) {
  return load_le<uint64_t>(data, at);
}

// Appends `value` to `out` as sizeof(T) little-endian bytes: what load_le reads back.
template <class T>
void append_le(std::string& out, T value) {
  static_assert(std::is_integral_v<T>);
  auto u = static_cast<std::make_unsigned_t<T>>(value);
  for (size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((u >> (8 * i)) & 0xff);
}

}  // namespace sparkdoc::bytes
