#include "watch/time_text.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace sparkdoc::watch {
namespace {

struct Split {
  std::tm tm{};
  int millis = 0;
};

// Broken-down time (UTC or local) and the milliseconds, rounded without reaching 1000.
Split split(double ts, bool utc) {
  double whole = std::floor(ts);
  auto seconds = static_cast<std::time_t>(whole);
  auto millis = static_cast<int>(std::lround((ts - whole) * 1000.0));
  if (millis >= 1000) {
    ++seconds;
    millis -= 1000;
  }
  Split out;
  out.millis = millis;
  if (utc) {
    gmtime_r(&seconds, &out.tm);
  } else {
    localtime_r(&seconds, &out.tm);
  }
  return out;
}

}  // namespace

std::string iso8601_utc(double ts) {
  Split t = split(ts, true);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm.tm_year + 1900,
                     t.tm.tm_mon + 1, t.tm.tm_mday, t.tm.tm_hour, t.tm.tm_min, t.tm.tm_sec,
                     t.millis);
}

std::string nvidia_smi_timestamp(double ts) {
  Split t = split(ts, false);
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", t.tm.tm_year + 1900,
                     t.tm.tm_mon + 1, t.tm.tm_mday, t.tm.tm_hour, t.tm.tm_min, t.tm.tm_sec,
                     t.millis);
}

std::string local_clock(double ts) {
  Split t = split(ts, false);
  return fmt::format("{:02}:{:02}:{:02}", t.tm.tm_hour, t.tm.tm_min, t.tm.tm_sec);
}

}  // namespace sparkdoc::watch
