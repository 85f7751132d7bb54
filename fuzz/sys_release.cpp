// os-release and /etc/dgx-release text: parse_release_file. Invariants: keys are non-empty
// [A-Za-z0-9_], values fit the cut.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/release.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = sparkdoc::sys::parse_release_file(text);
  if (!parsed) return 0;
  if (parsed->size() > 256) __builtin_trap();
  for (const auto& [key, value] : *parsed) {
    if (key.empty() || value.size() > 1024) __builtin_trap();
  }
  return 0;
}
