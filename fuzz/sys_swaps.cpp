// /proc/swaps text: parse_swaps. Invariant: sizes come back as whole kibibytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/swaps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto areas = sparkdoc::sys::parse_swaps(text);
  if (areas) {
    for (const auto& area : *areas) {
      if (area.size_bytes % 1024 != 0 || area.used_bytes % 1024 != 0) __builtin_trap();
    }
  }
  return 0;
}
