#include "core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/strings.h"

namespace sparkdoc {

namespace {

struct Quantity {
  double number = 0;
  std::string unit;  // lower case, trimmed; empty when none was written
};

// "70 GB" -> {70, "gb"}: a non-negative decimal number and the unit after it. `what` names the
// quantity in error messages ("size", "duration").
Result<Quantity> split_quantity(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  if (s.empty()) return fail(fmt::format("empty {}", what));
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return fail(fmt::format("{} '{}' does not start with a number", what, text));
  double number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + i, number);
  if (ec != std::errc() || ptr != s.data() + i || !std::isfinite(number) || number < 0) {
    return fail(fmt::format("{} '{}' is not a number", what, text));
  }
  return Quantity{number, to_lower(trim(s.substr(i)))};
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text) {
  auto quantity = split_quantity(text, "size");
  if (!quantity) return tl::unexpected(quantity.error());
  const double number = quantity->number;
  const std::string& unit = quantity->unit;
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

Result<uint64_t> parse_memory_size(std::string_view text) {
  auto quantity = split_quantity(text, "size");
  if (!quantity) return tl::unexpected(quantity.error());
  if (quantity->unit.empty()) {
    std::string number(trim(text));
    return fail(
        fmt::format("'{}' has no unit: write {}GB (decimal, as sparkdoc prints sizes) or "
                    "{}GiB; a bare number would be {} bytes",
                    number, number, number, number));
  }
  return parse_size(text);
}

Result<double> parse_duration_s(std::string_view text) {
  auto quantity = split_quantity(text, "duration");
  if (!quantity) return tl::unexpected(quantity.error());
  const std::string& unit = quantity->unit;
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  else return fail(fmt::format("duration '{}' has unknown unit '{}' (use ms, s, m, h)", text, unit));
  double seconds = quantity->number * scale;
  // A year is far beyond any run; anything longer is a typo, and keeps later arithmetic finite.
  if (seconds > 366.0 * 86400) return fail(fmt::format("duration '{}' is too long", text));
  return seconds;
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

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  auto whole = static_cast<uint64_t>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{} min {} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

std::string format_duration_ns(uint64_t ns) {
  double s = static_cast<double>(ns) / 1e9;
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.1f} min", s / 60);
  if (s >= 1) return fmt::format("{:.1f} s", s);
  return fmt::format("{:.1f} ms", s * 1000);
}

std::string format_watts(uint64_t mw) {
  return fmt::format("{:.1f} W", static_cast<double>(mw) / 1000.0);
}

}  // namespace sparkdoc
