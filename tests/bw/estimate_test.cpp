// How long `sparkdoc bw` says it has left (issue 18: its host part ran 27-35 s with no word of
// it): from the host read's pace on, the whole run's remainder.
#include "bw/estimate.h"

#include <gtest/gtest.h>

namespace sparkdoc::bw {
namespace {

TEST(Estimate, NothingIsForeseenDuringTheDeviceParts) {
  Estimate e;
  e.record("device copy", 1, 23, 0.1);
  EXPECT_FALSE(e.remaining_s());
  EXPECT_EQ(e.remaining_text(), "");
}

TEST(Estimate, TheHostReadsPaceForeseesWriteAndCopy) {
  Estimate e;
  for (int i = 1; i <= 23; ++i) e.record("device copy", i, 23, 0.01 * i);
  // Host read: the first run ends late (the buffers' first touch), then 0.5 s a run.
  e.record("host read", 1, 23, 2.0);
  EXPECT_FALSE(e.remaining_s());
  e.record("host read", 2, 23, 2.5);
  ASSERT_TRUE(e.remaining_s());
  // 21 reads to go, then 23 writes at a read's pace and 23 copies at twice it.
  EXPECT_NEAR(*e.remaining_s(), 0.5 * (21 + 23 + 46), 1e-9);
  EXPECT_EQ(e.remaining_text(), "about 45 s left");
  for (int i = 3; i <= 23; ++i) e.record("host read", i, 23, 1.5 + 0.5 * i);
  // The write runs slower than the read: its own pace counts for its own runs.
  e.record("host write", 1, 23, 14);
  e.record("host write", 2, 23, 15);
  EXPECT_NEAR(*e.remaining_s(), 1.0 * 21 + 0.5 * 2 * 23, 1e-9);
  e.record("host copy", 1, 23, 100);
  e.record("host copy", 22, 23, 121);
  EXPECT_NEAR(*e.remaining_s(), 1.0, 1e-9);
  e.record("host copy", 23, 23, 122);
  EXPECT_EQ(e.remaining_text(), "under a second left");
}

TEST(Estimate, MinutesForALongRun) {
  Estimate e;
  e.record("host read", 1, 100, 1);
  e.record("host read", 2, 100, 3);
  EXPECT_EQ(e.remaining_text(), "about 14 min left");  // 98 x 2 + 100 x 2 + 200 x 2 = 796 s
}

}  // namespace
}  // namespace sparkdoc::bw
