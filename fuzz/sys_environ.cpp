// /proc/PID/environ text: parse_environ and the recorded-variable filter. Invariants: no empty
// names, and the filter keeps only recorded names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/environment.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto env = sparkdoc::sys::parse_environ(text);
  for (const auto& entry : env) {
    if (entry.first.empty() || entry.first.find('\0') != std::string::npos) __builtin_trap();
  }
  for (const auto& entry : sparkdoc::sys::recorded_only(env)) {
    if (!sparkdoc::sys::is_recorded_env(entry.first)) __builtin_trap();
  }
  return 0;
}
