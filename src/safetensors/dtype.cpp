#include "safetensors/dtype.h"

#include <array>

namespace sparkdoc::safetensors {
namespace {

struct DtypeRow {
  Dtype dtype;
  std::string_view name;
  unsigned bits;
  bool is_float;
};

// Order of the format's enum (increasing alignment).
constexpr std::array<DtypeRow, 22> kDtypes{{
    {Dtype::kBool, "BOOL", 8, false},
    {Dtype::kF4, "F4", 4, true},
    {Dtype::kF6E2M3, "F6_E2M3", 6, true},
    {Dtype::kF6E3M2, "F6_E3M2", 6, true},
    {Dtype::kU8, "U8", 8, false},
    {Dtype::kI8, "I8", 8, false},
    {Dtype::kF8E5M2, "F8_E5M2", 8, true},
    {Dtype::kF8E4M3, "F8_E4M3", 8, true},
    {Dtype::kF8E8M0, "F8_E8M0", 8, true},
    {Dtype::kF8E4M3Fnuz, "F8_E4M3FNUZ", 8, true},
    {Dtype::kF8E5M2Fnuz, "F8_E5M2FNUZ", 8, true},
    {Dtype::kI16, "I16", 16, false},
    {Dtype::kU16, "U16", 16, false},
    {Dtype::kF16, "F16", 16, true},
    {Dtype::kBF16, "BF16", 16, true},
    {Dtype::kI32, "I32", 32, false},
    {Dtype::kU32, "U32", 32, false},
    {Dtype::kF32, "F32", 32, true},
    {Dtype::kC64, "C64", 64, true},
    {Dtype::kF64, "F64", 64, true},
    {Dtype::kI64, "I64", 64, false},
    {Dtype::kU64, "U64", 64, false},
}};

constexpr std::array<Dtype, 22> kAll = [] {
  std::array<Dtype, 22> out{};
  for (size_t i = 0; i < kDtypes.size(); ++i) out[i] = kDtypes[i].dtype;
  return out;
}();

const DtypeRow& row(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view dtype_name(Dtype dtype) { return row(dtype).name; }
unsigned dtype_bits(Dtype dtype) { return row(dtype).bits; }
bool dtype_is_float(Dtype dtype) { return row(dtype).is_float; }
std::span<const Dtype> all_dtypes() { return kAll; }

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (const auto& r : kDtypes) {
    if (r.name == name) return r.dtype;
  }
  return std::nullopt;
}

std::optional<uint64_t> dtype_bytes(Dtype dtype, uint64_t numel) {
  uint64_t bits = 0;
  if (__builtin_mul_overflow(numel, uint64_t{dtype_bits(dtype)}, &bits)) return std::nullopt;
  if (bits % 8 != 0) return std::nullopt;
  return bits / 8;
}

}  // namespace sparkdoc::safetensors
