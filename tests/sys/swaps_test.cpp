#include "sys/swaps.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

// DGX OS ships a swap file; the reference saw about 15 GB of it on one Spark (§3.2).
constexpr std::string_view kSparkSwaps =
    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    "/swap.img                               file\t\t15624996\t1048576\t\t-2\n";

TEST(Swaps, SwapFileOfASpark) {
  auto areas = parse_swaps(kSparkSwaps);
  ASSERT_TRUE(areas) << areas.error().message;
  ASSERT_EQ(areas->size(), 1u);
  EXPECT_EQ((*areas)[0].path, "/swap.img");
  EXPECT_EQ((*areas)[0].type, "file");
  EXPECT_EQ((*areas)[0].size_bytes, 15624996ull * 1024);
  EXPECT_EQ((*areas)[0].used_bytes, 1048576ull * 1024);
  EXPECT_EQ((*areas)[0].priority, -2);
}

TEST(Swaps, NoSwapIsAnEmptyList) {
  auto areas = parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  ASSERT_TRUE(areas);
  EXPECT_TRUE(areas->empty());
}

TEST(Swaps, EscapedNamesAreDecoded) {
  auto areas = parse_swaps(
      "Filename Type Size Used Priority\n"
      "/mnt/my\\040swap\\134file file 1024 0 5\n"
      "/dev/dm-1 partition 8388604 0 -3\n");
  ASSERT_TRUE(areas);
  ASSERT_EQ(areas->size(), 2u);
  EXPECT_EQ((*areas)[0].path, "/mnt/my swap\\file");
  EXPECT_EQ((*areas)[0].priority, 5);
  EXPECT_EQ((*areas)[1].type, "partition");
}

TEST(Swaps, RejectsMalformedText) {
  EXPECT_FALSE(parse_swaps(""));
  EXPECT_FALSE(parse_swaps("/swap.img file 1 0 -2\n"));  // no header
  EXPECT_FALSE(parse_swaps("Filename Type Size Used Priority\n/swap.img file 1 0\n"));
  EXPECT_FALSE(parse_swaps("Filename Type Size Used Priority\n/swap.img file x 0 -2\n"));
  EXPECT_FALSE(parse_swaps("Filename Type Size Used Priority\n/s file 1 0 99999999999\n"));
  EXPECT_FALSE(parse_swaps("Filename Type Size Used Priority\n/s file 18446744073709551615 0 1\n"));
}

TEST(Swaps, ReadsThroughTheRoot) {
  testing::TempTree tree;
  tree.write("proc/swaps", kSparkSwaps);
  auto areas = read_swaps(Root(tree.path()));
  ASSERT_TRUE(areas);
  EXPECT_EQ(areas->size(), 1u);
  auto missing = read_swaps(Root(tree.path() + "/nothing"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::sys
