// The run log (watch.jsonl / run.jsonl) through its one reader in both modes, and through
// everything `sparkdoc report` does with it: each line strictly (a record it takes is written
// again), the whole text tolerantly (runlog::parse_log), the summary, its text and JSON and,
// for one input in 64, the HTML page (drawing it costs about a hundred parses; every input
// drawn keeps the fuzzer at a few hundred runs a second). Invariants: nothing throws or
// crashes; the ignored tail is never longer than the input; samples and events come out in
// time order; the page is always a whole document.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "facts/run_summary.h"
#include "report/run_page.h"
#include "report/run_summary.h"
#include "runlog/reader.h"
#include "runlog/writer.h"

namespace {

using namespace sparkdoc;

void strict_lines(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    if (auto record = runlog::parse_line(line, runlog::Mode::kStrict)) {
      std::visit(
          [](const auto& r) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(r)>, runlog::UnknownRecord>) {
              (void)runlog::to_line(r);
            } else {
              __builtin_trap();  // strict mode never gives one
            }
          },
          *record);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  strict_lines(text);
  runlog::RunLog log = runlog::parse_log(text, "fuzz");
  if (log.truncated_bytes > size) __builtin_trap();
  for (size_t i = 1; i < log.samples.size(); ++i) {
    if (log.samples[i].ts < log.samples[i - 1].ts) __builtin_trap();
  }
  for (size_t i = 1; i < log.events.size(); ++i) {
    if (log.events[i].ts < log.events[i - 1].ts) __builtin_trap();
  }
  auto summary = facts::summarize_run(log);
  std::string summary_text = report::render_run_summary_text(summary);
  std::string json = report::render_run_summary_json(summary).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (summary_text.empty() || json.empty()) __builtin_trap();
  if (size % 64 == 7) {
    std::string html = report::render_run_page(log, summary, {});
    if (!html.ends_with("</html>\n")) __builtin_trap();
  }
  return 0;
}
