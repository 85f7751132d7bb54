#include "core/strings.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(Strings, SplitAndTrim) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  auto parts = split("a::b", ':');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  auto ws = split_ws("MemTotal:   127600748 kB");
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[1], "127600748");
  EXPECT_EQ(parse_u64(" 42 ").value(), 42u);
  EXPECT_FALSE(parse_u64("4x2"));
  EXPECT_FALSE(parse_u64(""));
}

}  // namespace
}  // namespace sparkdoc
