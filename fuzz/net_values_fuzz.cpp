// One-value sysfs files and names the network probes parse: integers, speed, carrier, a port's
// rate, a GID, a PCI address, a versioned libnccl name, and clean_value. Invariants: a rate is
// finite and not negative, a speed not negative, a GID 39 characters, a cleaned value bounded.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/values.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace sparkdoc::net;
  (void)parse_sysfs_uint(text);
  (void)parse_carrier(text);
  (void)is_pci_address(text);
  if (auto speed = parse_speed_mbps(text); speed && *speed < 0) __builtin_trap();
  if (auto rate = parse_rate_gbps(text); rate && (!std::isfinite(*rate) || *rate < 0)) {
    __builtin_trap();
  }
  if (auto gid = parse_gid(text); gid && gid->size() != 39) __builtin_trap();
  if (auto version = parse_nccl_library_name(text); version && version->empty()) __builtin_trap();
  auto cleaned = clean_value(text);
  if (cleaned.size() > 256) __builtin_trap();
  for (char c : cleaned) {
    if (c < 0x20 || c > 0x7e) __builtin_trap();
  }
  return 0;
}
