#include "core/units.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(ParseSize, DecimalAndBinaryUnits) {
  EXPECT_EQ(parse_size("70GB").value(), 70 * kGB);
  EXPECT_EQ(parse_size("70 G").value(), 70 * kGB);
  EXPECT_EQ(parse_size("64GiB").value(), 64 * kGiB);
  EXPECT_EQ(parse_size("512MiB").value(), 512 * kMiB);
  EXPECT_EQ(parse_size("1.5TB").value(), 1500 * kGB);
  EXPECT_EQ(parse_size("123456").value(), 123456u);
}

// Issue 18: "--need 70" read as 70 bytes passed every check silently.
TEST(ParseMemorySize, ABareNumberIsRefusedWithWhatToWrite) {
  auto bare = parse_memory_size("70");
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error().message,
            "'70' has no unit: write 70GB (decimal, as sparkdoc prints sizes) or 70GiB; a bare "
            "number would be 70 bytes");
  EXPECT_EQ(parse_memory_size("70GB").value(), 70 * kGB);
  EXPECT_EQ(parse_memory_size(" 64 GiB ").value(), 64 * kGiB);
  EXPECT_FALSE(parse_memory_size("lots"));
}

TEST(ParseSize, RejectsGarbage) {
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("GB"));
  EXPECT_FALSE(parse_size("12 parsecs"));
  EXPECT_FALSE(parse_size("-4GB"));
  EXPECT_FALSE(parse_size("1e30GB"));
}

TEST(ParseDuration, UnitsAndBareSeconds) {
  EXPECT_DOUBLE_EQ(parse_duration_s("1s").value(), 1.0);
  EXPECT_DOUBLE_EQ(parse_duration_s("500ms").value(), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_s("10m").value(), 600.0);
  EXPECT_DOUBLE_EQ(parse_duration_s("2 h").value(), 7200.0);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5").value(), 1.5);
}

TEST(ParseDuration, RejectsGarbage) {
  EXPECT_FALSE(parse_duration_s(""));
  EXPECT_FALSE(parse_duration_s("s"));
  EXPECT_FALSE(parse_duration_s("-1s"));
  EXPECT_FALSE(parse_duration_s("3 fortnights"));
  EXPECT_FALSE(parse_duration_s("400d"));
}

TEST(FormatGb, OneDecimal) {
  EXPECT_EQ(format_gb(uint64_t{14'234'000'000}), "14.2 GB");
  EXPECT_EQ(format_gb(int64_t{-2'000'000'000}), "-2.0 GB");
  EXPECT_EQ(format_binary(1048576), "1.0 MiB");
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(format_duration(12.44), "12.4 s");
  EXPECT_EQ(format_duration(190), "3 min 10 s");
  EXPECT_EQ(format_duration(3720), "1 h 02 min");
  EXPECT_EQ(format_duration(-1), "?");
}

}  // namespace
}  // namespace sparkdoc
