// safetensors headers: parse_header over the whole input as a file, in both size modes.
// Invariants on success: the tensors tile [0, data_bytes) in order, each holds exactly the bytes
// its shape and dtype need, names are unique, and header-only acceptance is implied by exact.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "safetensors/header.h"

using namespace sparkdoc::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto exact = parse_header(bytes, size, "fuzz");
  auto header_only = parse_header(bytes, size, "fuzz", {SizeCheck::kHeaderOnly});
  if (exact && !header_only) __builtin_trap();
  if (!header_only) return 0;
  uint64_t at = 0;
  for (const auto& t : header_only->tensors) {
    if (t.begin != at || t.end < t.begin) __builtin_trap();
    auto need = dtype_bytes(t.dtype, t.numel());
    if (!need || *need != t.byte_size()) __builtin_trap();
    if (header_only->find(t.name) == nullptr) __builtin_trap();
    at = t.end;
  }
  if (at != header_only->data_bytes) __builtin_trap();
  if (header_only->data_start() + header_only->data_bytes < size) __builtin_trap();
  return 0;
}
