#include "core/printable.h"

#include <array>
#include <cstdint>

namespace sparkdoc {
namespace {

constexpr std::array<std::string_view, 6> kOwnColors = {
    color::kReset, color::kGreen, color::kBoldRed, color::kYellow, color::kDim, color::kCyan};

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
  }
}

void append_code_point_escape(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
}

// The length of the well-formed UTF-8 sequence at text[i] and its code point, or 0 when the
// bytes there are not one (overlong forms, surrogates and values past U+10FFFF included).
size_t utf8_sequence(std::string_view text, size_t i, uint32_t& cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (length == 0 || lead > 0xf4 || i + length > text.size()) return 0;
  cp = lead & (0x7f >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return length;
}

bool steers_the_terminal(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t allowed_at(std::string_view text, size_t i, const PrintableOptions& options) {
  for (std::string_view s : options.allowed_sequences) {
    if (text.substr(i, s.size()) == s) return s.size();
  }
  return 0;
}

}  // namespace

void append_printable(std::string& out, std::string_view text, const PrintableOptions& options) {
  out.reserve(out.size() + text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      // The common case: a run of plain ASCII, copied at once.
      size_t end = i + 1;
      while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x20 &&
             static_cast<unsigned char>(text[end]) < 0x7f) {
        ++end;
      }
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      if (options.keep_lines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
        ++i;
        continue;
      }
      if (c == 0x1b) {
        if (size_t n = allowed_at(text, i, options)) {
          out.append(text.substr(i, n));
          i += n;
          continue;
        }
      }
      append_byte_escape(out, c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      append_byte_escape(out, c);
      ++i;
    } else if (steers_the_terminal(cp)) {
      append_code_point_escape(out, cp);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
}

std::string printable(std::string_view text, const PrintableOptions& options) {
  std::string out;
  append_printable(out, text, options);
  return out;
}

size_t printable_incomplete_tail(std::string_view text, const PrintableOptions& options) {
  // An escape sequence sparkdoc may pass, cut short by the end of the text.
  size_t from = text.size() > 8 ? text.size() - 8 : 0;
  for (size_t i = from; i < text.size(); ++i) {
    if (text[i] != '\x1b') continue;
    std::string_view rest = text.substr(i);
    for (std::string_view s : options.allowed_sequences) {
      if (rest.size() < s.size() && s.substr(0, rest.size()) == rest) return rest.size();
    }
  }
  // A UTF-8 lead byte whose continuation bytes have not come yet.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

std::span<const std::string_view> own_color_sequences() {
  return kOwnColors;
}

}  // namespace sparkdoc
