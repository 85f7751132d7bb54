// accelerate's default_config.yaml / .json text: parse_accelerate_config.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/accelerate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = sparkdoc::sys::parse_accelerate_config(text);
  if (config && !config->path.empty()) __builtin_trap();
  return 0;
}
