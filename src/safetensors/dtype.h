// safetensors element types. The names are the format's own ("BF16", "F8_E4M3", ...); the bit
// widths decide how many bytes a shape needs (reference §7, safetensors tensor.rs `Dtype`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sparkdoc::safetensors {

enum class Dtype : uint8_t {
  kBool,
  kF4,       // MXFP4 (e2m1): 4 bits, two to a byte
  kF6E2M3,   // MXFP6: 6 bits
  kF6E3M2,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kF8E8M0,   // MX block scale
  kF8E4M3Fnuz,
  kF8E5M2Fnuz,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,
  kF64,
  kI64,
  kU64,
};

std::string_view dtype_name(Dtype dtype);              // "BF16"
std::optional<Dtype> dtype_from_name(std::string_view name);  // exact, case-sensitive
unsigned dtype_bits(Dtype dtype);                      // 4, 6, 8, 16, 32 or 64
bool dtype_is_float(Dtype dtype);                      // F*, BF16, C64 (not BOOL, not integers)
std::span<const Dtype> all_dtypes();

// Bytes that `numel` elements of `dtype` occupy, or nullopt when the bit count overflows or is
// not a whole number of bytes (a sub-byte tensor must end on a byte boundary).
std::optional<uint64_t> dtype_bytes(Dtype dtype, uint64_t numel);

}  // namespace sparkdoc::safetensors
