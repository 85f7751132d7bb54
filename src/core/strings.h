// Small text helpers used by parsers. All are pure and allocation-light.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc {

std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view needle);
// Splits on `sep`; keeps empty fields.
std::vector<std::string_view> split(std::string_view s, char sep);
// Splits on runs of spaces and tabs; drops empty fields.
std::vector<std::string_view> split_ws(std::string_view s);
std::vector<std::string_view> lines(std::string_view s);
std::optional<uint64_t> parse_u64(std::string_view s);
std::optional<int64_t> parse_i64(std::string_view s);
std::optional<double> parse_double(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Wraps `text` at spaces to lines of at most `width` columns where the words allow; every line
// after the first starts with `indent` spaces. The first line starts at column `first_column`
// (a label printed before it). Spaces inside a line are kept as written, so aligned columns
// stay aligned; a line never breaks inside a `quoted command` or between a number and its unit
// ("24.4 GB", "12 s"). No trailing newline.
std::string wrap_text(std::string_view text, size_t width, size_t indent, size_t first_column = 0);

}  // namespace sparkdoc
