// One transient status line on stderr, for work that may take longer than a second: drawn as
// "\r<text>" and erased to the end of the line, only when stderr is a terminal, at most every
// 100 ms, and only once `delay` has passed since the line was made (so that work which ends
// sooner shows nothing). Cleared by clear() or on destruction. Thread-safe: worker threads
// may report.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string_view>

namespace sparkdoc::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // For callers that decide themselves whether to show it, and for tests (`out`).
  ProgressLine(std::chrono::milliseconds delay, bool enabled, std::FILE* out = stderr);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  // Draws `text` unless the last drawing was under 100 ms ago; `force` draws regardless (a
  // phase's last step).
  void show(std::string_view text, bool force = false);
  void clear();
  bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  const bool enabled_;
  std::FILE* const out_;
  const Clock::time_point visible_from_;
  Clock::time_point last_{};
  bool shown_ = false;
  std::mutex mutex_;
};

}  // namespace sparkdoc::cli
