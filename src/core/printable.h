// Text from files and other processes made safe to print on a terminal.
//
// A tensor name, a model_type, a logged command line or a package's METADATA can hold escape
// sequences: written raw, "\x1b[2K\x1b[1A" erases the line above and can paint "ALL CHECKS
// PASS" over a FAIL. printable() shows every byte that would steer the terminal as a visible
// escape instead, so what is printed is what the file holds and nothing more:
//   C0 controls and DEL       "\x1b", "\r", "\n", "\t" (kept as is with keep_lines)
//   C1 controls (U+0080-9F)   "\u009b" (a lone 0x9b byte is CSI on some terminals)
//   bidi and invisible marks  "\u202e" (U+200E/F, U+202A-E, U+2066-9 reorder what is shown)
//   bytes that are not UTF-8  "\xff"
// Backslashes are left alone, so JSON written through it stays the same JSON: JSON has no raw
// control bytes, and "\u009b" inside a JSON string means the character it replaced.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sparkdoc {

struct PrintableOptions {
  bool keep_lines = false;  // pass '\n' and '\t' (whole reports); a single field escapes them
  // Escape sequences passed through as they are: sparkdoc's own colours, when it prints them.
  std::span<const std::string_view> allowed_sequences = {};
};

std::string printable(std::string_view text, const PrintableOptions& options = {});
// Appends printable(text) to out.
void append_printable(std::string& out, std::string_view text, const PrintableOptions& options);

// How many bytes at the end of `text` might be the start of a sequence that more bytes would
// complete (a UTF-8 character cut short, or the start of an allowed escape sequence): a stream
// holds them back until the next write. At most 8.
size_t printable_incomplete_tail(std::string_view text, const PrintableOptions& options);

// The colours sparkdoc itself prints (report's verdict table); own_color_sequences() lists
// them for allowed_sequences.
namespace color {
inline constexpr std::string_view kReset = "\x1b[0m";
inline constexpr std::string_view kGreen = "\x1b[32m";
inline constexpr std::string_view kBoldRed = "\x1b[1;31m";
inline constexpr std::string_view kYellow = "\x1b[33m";
inline constexpr std::string_view kDim = "\x1b[2m";
inline constexpr std::string_view kCyan = "\x1b[36m";
}  // namespace color
std::span<const std::string_view> own_color_sequences();

}  // namespace sparkdoc
