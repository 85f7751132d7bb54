#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/printable.h"

namespace sparkdoc::cli {

ProgressLine::ProgressLine(std::chrono::milliseconds delay)
    : ProgressLine(delay, ::isatty(STDERR_FILENO) == 1) {}

ProgressLine::ProgressLine(std::chrono::milliseconds delay, bool enabled, std::FILE* out)
    : enabled_(enabled), out_(out), visible_from_(Clock::now() + delay) {}

ProgressLine::~ProgressLine() {
  clear();
}

void ProgressLine::show(std::string_view text, bool force) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  if (now < visible_from_) return;
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line = "\r";
  // Progress names files from the model folder: shown, never obeyed (core/printable.h).
  append_printable(line, text, {});
  line.append("\033[K");
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  shown_ = true;
}

void ProgressLine::clear() {
  std::lock_guard lock(mutex_);
  if (!shown_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace sparkdoc::cli
