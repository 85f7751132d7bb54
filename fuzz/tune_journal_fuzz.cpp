// The tuning journal: parse_journal. Invariants: it never throws; whole lines only (what it
// took plus the truncated tail never exceeds the input); every recorded change, swap area and
// GPU clock lock comes from a line within the text; originals() names each path once, and
// clocked_gpus() each GPU once.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "tune/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto contents = sparkdoc::tune::parse_journal(text);
  if (!contents) return 0;
  if (contents->truncated_bytes > size) __builtin_trap();
  size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  for (const auto& change : contents->changes) {
    if (change.line == 0 || change.line > lines) __builtin_trap();
  }
  for (const auto& swap : contents->swaps_off) {
    if (swap.line == 0 || swap.line > lines) __builtin_trap();
  }
  for (const auto& clocks : contents->gpu_clocks) {
    if (clocks.line == 0 || clocks.line > lines || clocks.uuid.empty()) __builtin_trap();
  }
  if (contents->sessions.empty() && !contents->empty()) __builtin_trap();
  std::set<std::string> paths;
  for (const auto& [path, value] : contents->originals()) {
    if (!paths.insert(path).second) __builtin_trap();
  }
  if (contents->swap_areas().size() > contents->swaps_off.size()) __builtin_trap();
  std::set<std::string> uuids;
  for (const auto& gpu : contents->clocked_gpus()) {
    if (!uuids.insert(gpu.uuid).second) __builtin_trap();
  }
  return 0;
}
