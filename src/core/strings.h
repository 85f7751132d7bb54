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

}  // namespace sparkdoc
