// The run log (watch.jsonl / run.jsonl) through everything `sparkdoc report` does with it:
// parse_log, summarize, the text and JSON summaries and, for one input in 64, the HTML
// page (drawing it costs about a hundred parses; every input drawn keeps the fuzzer at a few
// hundred runs a second). Invariants: nothing throws or crashes; the ignored tail is never
// longer than the input; samples and events come out in time order; the page is always a whole
// document.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "runreport/html.h"
#include "runreport/log.h"
#include "runreport/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sparkdoc::runreport::RunLog log = sparkdoc::runreport::parse_log(text, "fuzz");
  if (log.truncated_bytes > size) __builtin_trap();
  for (size_t i = 1; i < log.samples.size(); ++i) {
    if (log.samples[i].ts < log.samples[i - 1].ts) __builtin_trap();
  }
  for (size_t i = 1; i < log.events.size(); ++i) {
    if (log.events[i].ts < log.events[i - 1].ts) __builtin_trap();
  }
  auto summary = sparkdoc::runreport::summarize(log);
  std::string summary_text = sparkdoc::runreport::render_summary_text(summary);
  std::string json = sparkdoc::runreport::render_summary_json(summary).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (summary_text.empty() || json.empty()) __builtin_trap();
  if (size % 64 == 7) {
    std::string html = sparkdoc::runreport::render_html(log, summary, {});
    if (!html.ends_with("</html>\n")) __builtin_trap();
  }
  return 0;
}
