#include "core/reading.h"

#include <gtest/gtest.h>

#include "core/json.h"

namespace sparkdoc {
namespace {

TEST(Reading, ValueAndMissing) {
  Reading<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  auto missing = Reading<int>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.reason(), "not supported: NVML_ERROR_NOT_SUPPORTED");
  EXPECT_NE(ok, missing);
}

TEST(Reading, JsonRoundTrip) {
  Reading<int> ok = 7;
  auto missing = Reading<int>::absent(Why::kNoPermission, "EACCES");
  nlohmann::json a = ok, b = missing;
  EXPECT_EQ(a.dump(), "7");
  EXPECT_EQ(b.dump(), R"({"absent":"no_permission","detail":"EACCES"})");
  EXPECT_EQ(a.get<Reading<int>>(), ok);
  EXPECT_EQ(b.get<Reading<int>>(), missing);
}

TEST(Reading, FromResult) {
  Result<int> bad = fail(Why::kAbsent, "no file");
  auto r = Reading<int>::from(bad);
  EXPECT_EQ(r.missing().why, Why::kAbsent);
  EXPECT_EQ(r.missing().detail, "no file");
}

}  // namespace
}  // namespace sparkdoc
