// /var/lib/dpkg/status text: parse_dpkg_status. Invariants: only watched packages are kept,
// sorted, and never more than the installed count.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/packages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = sparkdoc::sys::parse_dpkg_status(text);
  if (!list) return 0;
  if (list->packages.size() > list->installed) __builtin_trap();
  for (size_t i = 0; i < list->packages.size(); ++i) {
    if (!sparkdoc::sys::is_watched_package(list->packages[i].name)) __builtin_trap();
    if (i > 0 && list->packages[i].name < list->packages[i - 1].name) __builtin_trap();
  }
  return 0;
}
