// The configuration text the network probes read: nccl.conf (parse_nccl_conf), logind.conf
// and its drop-ins (parse_logind_remove_ipc), /etc/passwd (parse_passwd). Invariants: the
// settings are bounded, names non-empty, everything recorded printable ASCII.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/config.h"

namespace {

bool printable_ascii(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto settings = sparkdoc::net::parse_nccl_conf(text);
  if (settings.size() > sparkdoc::net::kMaxConfSettings) __builtin_trap();
  for (const auto& [name, value] : settings) {
    if (name.empty() || name.size() > 1023 || value.size() > 1023) __builtin_trap();
    if (!printable_ascii(name) || !printable_ascii(value)) __builtin_trap();
  }
  (void)sparkdoc::net::parse_logind_remove_ipc(text);
  for (const auto& [uid, name] : sparkdoc::net::parse_passwd(text)) {
    if (name.empty() || !printable_ascii(name)) __builtin_trap();
  }
  return 0;
}
