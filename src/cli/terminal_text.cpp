#include "cli/terminal_text.h"

#include "core/printable.h"

namespace sparkdoc::cli {
namespace {

PrintableOptions stream_options() {
  PrintableOptions options;
  options.keep_lines = true;
  options.allowed_sequences = own_color_sequences();
  return options;
}

}  // namespace

TerminalText::TerminalText(std::ostream& stream) : stream_(stream), next_(stream.rdbuf(this)) {}

TerminalText::~TerminalText() {
  forward(/*flushing=*/true);
  stream_.rdbuf(next_);
}

bool TerminalText::forward(bool flushing) {
  static const PrintableOptions options = stream_options();
  size_t hold = flushing ? 0 : printable_incomplete_tail(pending_, options);
  std::string_view ready = std::string_view(pending_).substr(0, pending_.size() - hold);
  if (ready.empty()) return true;
  shown_.clear();
  append_printable(shown_, ready, options);
  pending_.erase(0, ready.size());
  auto size = static_cast<std::streamsize>(shown_.size());
  return next_ != nullptr && next_->sputn(shown_.data(), size) == size;
}

TerminalText::int_type TerminalText::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  return forward(false) ? c : traits_type::eof();
}

std::streamsize TerminalText::xsputn(const char* data, std::streamsize size) {
  pending_.append(data, static_cast<size_t>(size));
  return forward(false) ? size : 0;
}

int TerminalText::sync() {
  if (!forward(true)) return -1;
  return next_ != nullptr ? next_->pubsync() : -1;
}

}  // namespace sparkdoc::cli
