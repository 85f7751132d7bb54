// What sparkdoc reads of a Hub server's answers and of the user's token, parsed here and
// nowhere else: response header lines, Content-Range, Retry-After, and the token (HF_TOKEN or
// the token file). Pure: text in, values out; every input is untrusted (fuzz/hub_wire_fuzz.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sparkdoc::hub {

// One response header line as libcurl hands it over ("Content-Range: bytes 0-7/99\r\n"): the
// name and the value with surrounding blanks and the line end trimmed. nullopt for a status
// line, the blank line that ends the headers, or a line without a colon or with an empty name.
struct HeaderLine {
  std::string_view name;
  std::string_view value;
};
std::optional<HeaderLine> parse_header_line(std::string_view line);
// Whether a line starts a response ("HTTP/1.1 302 Found"): a redirect's headers are followed by
// those of the next response, and the fields read from the earlier one are dropped.
bool is_status_line(std::string_view line);

// Content-Range of a 206 answer (RFC 9110 §14.4): "bytes FIRST-LAST/COMPLETE" or
// "bytes FIRST-LAST/*". FIRST <= LAST, and LAST < COMPLETE when the length is given.
struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  std::optional<uint64_t> complete;  // the whole file's length, when the server says it
  bool operator==(const ContentRange&) const = default;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// Retry-After (RFC 9110 §10.2.3) as a person reads it: "30 s" for delay-seconds, the date as
// sent for an HTTP-date (printable ASCII, at most 64 characters), "" for anything else.
std::string retry_after_text(std::string_view value);

// A Hugging Face access token, from HF_TOKEN or the token file huggingface-cli login writes:
// the text with surrounding blanks and line ends trimmed. It goes into a request header, so a
// token holding anything but visible ASCII (a space, a control, a second line) is refused, as
// is one longer than 4096 bytes; the error says why without repeating the token. `source`
// names where it came from ("HF_TOKEN", "/home/u/.cache/huggingface/token").
Result<std::string> parse_token(std::string_view text, std::string_view source);

}  // namespace sparkdoc::hub
