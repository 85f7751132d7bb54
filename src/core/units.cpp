#include "core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/strings.h"

namespace sparkdoc {

Result<uint64_t> parse_size(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return fail("empty size");
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return fail(fmt::format("size '{}' does not start with a number", text));
  double number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + i, number);
  if (ec != std::errc() || ptr != s.data() + i || !std::isfinite(number) || number < 0) {
    return fail(fmt::format("size '{}' is not a number", text));
  }
  std::string unit = to_lower(trim(s.substr(i)));
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kb") scale = 1e3;
  else if (unit == "m" || unit == "mb") scale = 1e6;
  else if (unit == "g" || unit == "gb") scale = 1e9;
  else if (unit == "t" || unit == "tb") scale = 1e12;
  else if (unit == "kib") scale = static_cast<double>(kKiB);
  else if (unit == "mib") scale = static_cast<double>(kMiB);
  else if (unit == "gib") scale = static_cast<double>(kGiB);
  else if (unit == "tib") scale = static_cast<double>(kGiB) * 1024.0;
  else return fail(fmt::format("size '{}' has unknown unit '{}' (use GB, GiB, MB, MiB)", text, unit));
  double bytes = number * scale;
  if (bytes >= 1.8e19) return fail(fmt::format("size '{}' is too large", text));
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string format_gb(uint64_t bytes) {
  return fmt::format("{:.1f} GB", static_cast<double>(bytes) / 1e9);
}

std::string format_gb(int64_t bytes) {
  return fmt::format("{:.1f} GB", static_cast<double>(bytes) / 1e9);
}

std::string format_binary(uint64_t bytes) {
  double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", b / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", b / static_cast<double>(kMiB));
  if (bytes >= kKiB) return fmt::format("{:.1f} KiB", b / static_cast<double>(kKiB));
  return fmt::format("{} B", bytes);
}

}  // namespace sparkdoc
