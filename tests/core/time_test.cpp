#include "core/time.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(Iso8601, FormatsWholeSecondsOrMilliseconds) {
  EXPECT_EQ(format_iso8601_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_iso8601_utc(1795947301.9), "2026-11-29T10:15:01Z");
  EXPECT_EQ(format_iso8601_utc(0, TimePrecision::kMillis), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_iso8601_utc(1796000000.9996, TimePrecision::kMillis),
            "2026-11-30T00:53:21.000Z");
  EXPECT_EQ(format_iso8601_utc(1764504000.5, TimePrecision::kMillis), "2025-11-30T12:00:00.500Z");
}

// A log line may carry any number as its time ("ts": 1.796e124): casting that to time_t is
// undefined, so such a time has no text at all.
TEST(Iso8601, TimesBeyondTheFourDigitYearsHaveNoText) {
  for (double ts : {1.796e124, -1e300, 253402300800.0, -62135596801.0, 1.0 / 0.0, 0.0 / 0.0}) {
    EXPECT_EQ(format_iso8601_utc(ts), "") << ts;
    EXPECT_EQ(format_iso8601_utc(ts, TimePrecision::kMillis), "") << ts;
    EXPECT_EQ(nvidia_smi_timestamp(ts), "") << ts;
    EXPECT_EQ(local_clock(ts), "") << ts;
  }
  EXPECT_EQ(format_iso8601_utc(253402300798.0), "9999-12-31T23:59:58Z");
}

TEST(Iso8601, ParsesWhatItWrites) {
  EXPECT_EQ(parse_iso8601_utc("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(parse_iso8601_utc("2026-11-29T10:15:01Z"), 1795947301.0);
  EXPECT_DOUBLE_EQ(*parse_iso8601_utc("2026-11-29T10:15:01.25Z"), 1795947301.25);
  EXPECT_EQ(parse_iso8601_utc(format_iso8601_utc(1795947301.0)), 1795947301.0);
  for (const char* bad : {"", "2026-11-29", "2026-13-01T00:00:00Z", "2026-11-29T10:15:01",
                          "2026-11-29T10:15:01+01:00", "2026-11-29T10:15:01.Z",
                          "x026-11-29T10:15:01Z", "2026-11-29T10:15:01Zx"}) {
    EXPECT_FALSE(parse_iso8601_utc(bad)) << bad;
  }
}

}  // namespace
}  // namespace sparkdoc
