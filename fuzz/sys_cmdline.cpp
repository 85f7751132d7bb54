// /proc/PID/cmdline bytes: format_cmdline, classify_server and valid_utf8. Invariants: the
// formatted line fits the limit and holds no control characters, and both it and valid_utf8's
// output are text a strict JSON writer accepts.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "sys/processes.h"
#include "sys/text.h"

namespace {

bool json_accepts(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  std::string line = sparkdoc::sys::format_cmdline(raw);
  if (line.size() > sparkdoc::sys::kCmdlineMaxChars) __builtin_trap();
  for (char c : line) {
    if (static_cast<unsigned char>(c) < 0x20) __builtin_trap();
  }
  if (!json_accepts(line) || !json_accepts(sparkdoc::sys::valid_utf8(raw))) __builtin_trap();
  (void)sparkdoc::sys::classify_server(line);
  (void)sparkdoc::sys::classify_server(raw);
  return 0;
}
