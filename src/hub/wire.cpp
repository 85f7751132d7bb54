#include "hub/wire.h"

#include <fmt/format.h>

#include <cstddef>

#include "core/strings.h"

namespace sparkdoc::hub {
namespace {

// Blanks around a field value (RFC 9110 §5.5: optional whitespace is SP or HTAB) and the line
// end libcurl leaves on each header line.
std::string_view trim_field(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A decimal number of digits only (no sign, no blanks) that fits 64 bits.
std::optional<uint64_t> whole_number(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  return parse_u64(s);
}

bool visible_ascii(char c) {
  return c > ' ' && c < 0x7f;
}

}  // namespace

std::optional<HeaderLine> parse_header_line(std::string_view line) {
  if (is_status_line(line)) return std::nullopt;
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view name = line.substr(0, colon);
  // A field name is a token: no blanks inside or around it (RFC 9112 §5.1).
  if (name.empty()) return std::nullopt;
  for (char c : name) {
    if (!visible_ascii(c)) return std::nullopt;
  }
  return HeaderLine{name, trim_field(line.substr(colon + 1))};
}

bool is_status_line(std::string_view line) {
  return starts_with(line, "HTTP/");
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim_field(value);
  constexpr std::string_view kUnit = "bytes ";
  if (!starts_with(value, kUnit)) return std::nullopt;
  value.remove_prefix(kUnit.size());
  size_t dash = value.find('-');
  size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  auto first = whole_number(value.substr(0, dash));
  auto last = whole_number(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *first > *last) return std::nullopt;
  ContentRange range{*first, *last, std::nullopt};
  std::string_view complete = value.substr(slash + 1);
  if (complete != "*") {
    auto length = whole_number(complete);
    if (!length || *last >= *length) return std::nullopt;
    range.complete = *length;
  }
  return range;
}

std::string retry_after_text(std::string_view value) {
  value = trim_field(value);
  if (auto seconds = whole_number(value)) return fmt::format("{} s", *seconds);
  // An HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT") is shown as sent, if it looks like text.
  constexpr size_t kMaxDate = 64;
  if (value.empty() || value.size() > kMaxDate) return "";
  for (char c : value) {
    if (c != ' ' && !visible_ascii(c)) return "";
  }
  return std::string(value);
}

Result<std::string> parse_token(std::string_view text, std::string_view source) {
  std::string_view token = trim_field(text);
  constexpr size_t kMaxToken = 4096;
  if (token.empty()) return fail(Why::kAbsent, fmt::format("{} holds no token", source));
  if (token.size() > kMaxToken) {
    return fail(fmt::format("{} holds {} bytes, more than a token (at most {})", source,
                            token.size(), kMaxToken));
  }
  for (char c : token) {
    if (!visible_ascii(c)) {
      return fail(fmt::format(
          "{} is not a single token: it holds a space, a control character or more than one "
          "line (a token is one word of visible ASCII, as https://huggingface.co/settings/tokens "
          "shows it)",
          source));
    }
  }
  return std::string(token);
}

}  // namespace sparkdoc::hub
