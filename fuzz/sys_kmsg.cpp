// /dev/kmsg records: parse_kmsg_record and add_kmsg_record over one record per input line.
// Invariants: a kept message fits the cut, levels are 0-7, kept lines never exceed the count.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/strings.h"
#include "sys/kernel_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sparkdoc::sys::KernelLog log;
  for (std::string_view record : sparkdoc::lines(text)) {
    auto line = sparkdoc::sys::parse_kmsg_record(record);
    if (line && (line->level < 0 || line->level > 7)) __builtin_trap();
    sparkdoc::sys::add_kmsg_record(log, record);
  }
  if (log.lines.size() > log.nvidia_records || log.nvidia_records > log.records) __builtin_trap();
  for (const auto& l : log.lines) {
    // valid_utf8 replaces bytes one for one, so the cut holds after it.
    if (l.text.size() > sparkdoc::sys::kKernelLogTextMax) __builtin_trap();
  }
  return 0;
}
