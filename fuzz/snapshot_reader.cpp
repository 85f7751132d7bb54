// Snapshot documents come from other machines and bug reports: any bytes must give a
// Snapshot or an error, and a Snapshot that was read must write and read back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/snapshot_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto snapshot = sparkdoc::snapshot_from_text(text);
  if (!snapshot) return 0;
  auto again = sparkdoc::snapshot_from_text(sparkdoc::snapshot_to_text(*snapshot));
  if (!again || !(*again == *snapshot)) std::abort();
  return 0;
}
