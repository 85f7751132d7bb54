// /proc/self/mountinfo text: parse_mountinfo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/container.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto markers = sparkdoc::sys::parse_mountinfo(text);
  if (markers && markers->docker && text.find("/docker/containers/") == std::string_view::npos) {
    __builtin_trap();
  }
  return 0;
}
