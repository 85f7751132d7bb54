// Everything sparkdoc writes through std::cout and std::cerr passes printable() on its way out
// (core/printable.h): one filter at the two streams, so that no report, however its strings were
// put together, can carry an escape sequence from a file or another process to the terminal.
// Lines and tabs pass, and so do sparkdoc's own colours. JSON passes unchanged in meaning.
// Output written to a FILE* (watch's live view, the progress line) goes through printable() at
// the place it is written.
#pragma once

#include <iostream>
#include <streambuf>
#include <string>

namespace sparkdoc::cli {

// Filters what `stream` writes, for as long as it lives; restores the stream's buffer after.
class TerminalText : public std::streambuf {
 public:
  explicit TerminalText(std::ostream& stream);
  ~TerminalText() override;
  TerminalText(const TerminalText&) = delete;
  TerminalText& operator=(const TerminalText&) = delete;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* data, std::streamsize size) override;
  int sync() override;

 private:
  // Writes what is safe to write now; holds back a sequence cut short at the end.
  bool forward(bool flushing);

  std::ostream& stream_;
  std::streambuf* next_;
  std::string pending_;
  std::string shown_;
};

}  // namespace sparkdoc::cli
