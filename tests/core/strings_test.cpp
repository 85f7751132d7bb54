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

TEST(WrapText, BreaksAtWidthWithIndent) {
  // The first line starts at the given column (a label before it), the others at the indent.
  EXPECT_EQ(wrap_text("aaa bbb ccc", 9, 2, 2), "aaa bbb\n  ccc");
  EXPECT_EQ(wrap_text("aaa bbb ccc", 9, 2), "aaa bbb\n  ccc");
  EXPECT_EQ(wrap_text("aaa bbb ccc dd", 9, 2), "aaa bbb\n  ccc dd");
  EXPECT_EQ(wrap_text("", 10, 2), "");
}

TEST(WrapText, KeepsUnitsQuotedCommandsAndAlignedGaps) {
  EXPECT_EQ(wrap_text("free 24.4 GB now", 10, 0), "free\n24.4 GB\nnow");
  EXPECT_EQ(wrap_text("run `sparkdoc clean --yes` now", 12, 2),
            "run\n  `sparkdoc clean --yes`\n  now");
  EXPECT_EQ(wrap_text("a    b", 20, 0), "a    b");
}

}  // namespace
}  // namespace sparkdoc
