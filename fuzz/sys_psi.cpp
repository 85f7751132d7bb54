// /proc/pressure/* text: parse_psi.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/psi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto psi = sparkdoc::sys::parse_psi(text);
  if (psi && psi->full) (void)(psi->full->avg10 + psi->some.avg10);
  return 0;
}
