// Lines of a watch log (the run report and replays read logs that a killed watch, a full disk
// or a person's editor may have left): parse_log_line, and a record read back is written again.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "watch/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::watch;
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto record = parse_log_line(line);
  if (!record) return 0;
  if (auto* sample = std::get_if<Sample>(&*record)) (void)dump_line(sample_to_json(*sample));
  if (auto* header = std::get_if<Header>(&*record)) (void)dump_line(header_to_json(*header));
  if (auto* event = std::get_if<Event>(&*record)) (void)dump_line(event_to_json(*event));
  return 0;
}
