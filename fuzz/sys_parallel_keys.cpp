// Config file text: find_parallel_keys. Invariants: every hit has a key and a value, and
// line numbers never decrease.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/parallel_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  unsigned last_line = 0;
  for (const auto& hit : sparkdoc::sys::find_parallel_keys(text)) {
    if (hit.key.empty() || hit.value.empty() || hit.line < last_line || hit.line == 0) {
      __builtin_trap();
    }
    last_line = hit.line;
  }
  return 0;
}
