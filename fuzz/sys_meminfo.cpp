// /proc/meminfo text: parse_meminfo. Invariant: kB fields come back as whole kibibytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/meminfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto info = sparkdoc::sys::parse_meminfo(text);
  if (info && (info->mem_total_bytes % 1024 != 0 || info->hugepage_size_bytes % 1024 != 0)) {
    __builtin_trap();
  }
  return 0;
}
