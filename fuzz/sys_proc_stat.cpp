// /proc/PID/stat: state and start time, behind a comm any process may set to anything.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/proc_stat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto stat = sparkdoc::sys::parse_proc_stat(text);
  if (stat && stat->state == '\0' && text.find('\0') == std::string_view::npos) __builtin_trap();
  return 0;
}
