// /proc/PID/limits text: parse_limits. Invariant: success means at least one limit was found.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto limits = sparkdoc::sys::parse_limits(text);
  if (limits && !limits->memlock_bytes && !limits->stack_bytes) __builtin_trap();
  return 0;
}
