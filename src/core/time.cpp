#include "core/time.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <ctime>

namespace sparkdoc {
namespace {

// 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z in Unix seconds: the years ISO 8601's four
// digits can write.
constexpr double kEarliest = -62135596800.0;
constexpr double kLatest = 253402300800.0;

struct Split {
  std::tm tm{};
  int millis = 0;
};

// Broken-down time (UTC or local) and the milliseconds, rounded without reaching 1000; nullopt
// outside the years above.
std::optional<Split> split(double ts, bool utc) {
  if (!std::isfinite(ts) || ts < kEarliest || ts >= kLatest - 1) return std::nullopt;
  double whole = std::floor(ts);
  auto seconds = static_cast<std::time_t>(whole);
  auto millis = static_cast<int>(std::lround((ts - whole) * 1000.0));
  if (millis >= 1000) {
    ++seconds;
    millis -= 1000;
  }
  Split out;
  out.millis = millis;
  std::tm* done = utc ? gmtime_r(&seconds, &out.tm) : localtime_r(&seconds, &out.tm);
  if (done == nullptr) return std::nullopt;
  return out;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's algorithm: days since 1970-01-01 of a proleptic Gregorian date.
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<unsigned> digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  unsigned v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return v;
}

}  // namespace

std::string format_iso8601_utc(double ts, TimePrecision precision) {
  if (precision == TimePrecision::kSeconds && std::isfinite(ts)) ts = std::floor(ts);
  auto t = split(ts, true);
  if (!t) return "";
  std::string out =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t->tm.tm_year + 1900, t->tm.tm_mon + 1,
                  t->tm.tm_mday, t->tm.tm_hour, t->tm.tm_min, t->tm.tm_sec);
  if (precision == TimePrecision::kMillis) out += fmt::format(".{:03}", t->millis);
  return out + "Z";
}

std::optional<double> parse_iso8601_utc(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  auto y = digits(s, 0, 4);
  auto mo = digits(s, 5, 2);
  auto d = digits(s, 8, 2);
  auto h = digits(s, 11, 2);
  auto mi = digits(s, 14, 2);
  auto se = digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !se || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  double fraction = 0;
  if (pos < s.size() && s[pos] == '.') {
    double scale = 0.1;
    ++pos;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      fraction += scale * (s[pos] - '0');
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos + 1 != s.size() || s[pos] != 'Z') return std::nullopt;
  int64_t days = days_from_civil(*y, *mo, *d);
  return static_cast<double>(days * 86400 + *h * 3600 + *mi * 60 + *se) + fraction;
}

std::string utc_now_iso8601() {
  return format_iso8601_utc(static_cast<double>(std::time(nullptr)));
}

std::string nvidia_smi_timestamp(double ts) {
  auto t = split(ts, false);
  if (!t) return "";
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", t->tm.tm_year + 1900,
                     t->tm.tm_mon + 1, t->tm.tm_mday, t->tm.tm_hour, t->tm.tm_min, t->tm.tm_sec,
                     t->millis);
}

std::string local_clock(double ts) {
  auto t = split(ts, false);
  if (!t) return "";
  return fmt::format("{:02}:{:02}:{:02}", t->tm.tm_hour, t->tm.tm_min, t->tm.tm_sec);
}

}  // namespace sparkdoc
