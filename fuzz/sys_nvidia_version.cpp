// /proc/driver/nvidia/version text: parse_nvidia_version. Invariant: a version was found.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/nvidia_module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = sparkdoc::sys::parse_nvidia_version(text);
  if (module && module->version.empty()) __builtin_trap();
  return 0;
}
