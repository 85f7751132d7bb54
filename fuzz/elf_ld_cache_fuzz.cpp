// /etc/ld.so.cache tables: parse_ld_cache. Seeds in corpus/fuzz_ld_cache/ are a small table of
// each format (new; old header followed by a new table).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "elf/ld_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto entries =
      sparkdoc::elf::parse_ld_cache(std::string_view(reinterpret_cast<const char*>(data), size));
  if (entries) {
    size_t total = 0;
    for (const auto& e : *entries) total += e.soname.size() + e.path.size();
    (void)total;
  }
  return 0;
}
