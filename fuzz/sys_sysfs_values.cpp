// One-value files: /proc/sys integers (parse_sysctl_int) and CPU lists (parse_cpu_list).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sys/host.h"
#include "sys/vm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkdoc::sys::parse_sysctl_int(text);
  auto cpus = sparkdoc::sys::parse_cpu_list(text);
  if (cpus && (*cpus == 0 || *cpus > (1u << 20))) __builtin_trap();
  return 0;
}
