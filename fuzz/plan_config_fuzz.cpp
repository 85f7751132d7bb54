// A checkpoint's config.json, read by `sparkdoc plan` (and by nothing that runs its code).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::plan;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = parse_config(text);
  if (config) {
    if (config->text_model_type.empty() && !config->model_type.empty()) __builtin_trap();
    (void)is_mamba_model_type(config->text_model_type);
  } else if (config.error().message.empty()) {
    __builtin_trap();
  }
  return 0;
}
