// A dist-info RECORD (PEP 376 CSV), whose first fields say which distribution owns each shared
// object the audit reads, and the file names it judges by.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "audit/scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::audit;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    std::string path = record_path(line);
    if (path.size() > line.size()) __builtin_trap();  // unquoting never grows a field
    (void)is_shared_object_name(path);
    start = end + 1;
  }
  return 0;
}
