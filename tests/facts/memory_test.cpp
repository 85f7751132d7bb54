#include "facts/memory.h"

#include <gtest/gtest.h>

#include "../checks/snapshots.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks {
namespace {

using testing::gb10_snapshot;
using testing::h200_snapshot;
using testing::meminfo;

constexpr uint64_t kKb = 1024;

std::optional<facts::Headroom> headroom_of(const Snapshot& s) {
  return facts::compute_headroom(s, facts::classify_platform(s));
}

TEST(ComputeHeadroom, Gb10IsMemAvailablePlusSwapMinusFloor) {
  auto h = headroom_of(gb10_snapshot());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->available_bytes, 118'566'368 * kKb);
  EXPECT_EQ(h->floor_bytes, 8 * kGiB);
  EXPECT_EQ(h->bytes, static_cast<int64_t>(118'566'368 * kKb) - static_cast<int64_t>(8 * kGiB));
  EXPECT_EQ(h->without_cache_bytes,
            static_cast<int64_t>(114'912'356 * kKb) - static_cast<int64_t>(8 * kGiB));
  EXPECT_FALSE(h->hugepages);
  EXPECT_FALSE(h->device);
  // Cached + Buffers - Shmem, then minus Dirty and Writeback.
  EXPECT_EQ(h->page_cache_bytes, (3'688'416 + 310'224 - 152'340) * kKb);
  EXPECT_EQ(h->reclaimable_cache_bytes, (3'688'416 + 310'224 - 152'340 - 1'024) * kKb);
  EXPECT_EQ(h->rule, "MemAvailable 121.4 GB + SwapFree 0.0 GB - 8.6 GB floor");
}

TEST(ComputeHeadroom, SwapFreeCounts) {
  Snapshot s = gb10_snapshot();
  meminfo(s).swap_total_bytes = 16 * kGiB;
  meminfo(s).swap_free_bytes = 15 * kGiB;
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->available_bytes, 118'566'368 * kKb + 15 * kGiB);
  EXPECT_EQ(h->without_cache_bytes, static_cast<int64_t>(114'912'356 * kKb + 15 * kGiB - 8 * kGiB));
}

// Issue 21 item 6: counts from an edited snapshot stop at 2^64-1 instead of wrapping to a few
// bytes (which turned plenty of memory into a G3 FAIL, and a wrapped page cache into none).
TEST(ComputeHeadroom, HugeCountsSaturateInsteadOfWrapping) {
  Snapshot s = gb10_snapshot();
  meminfo(s).mem_available_bytes = UINT64_MAX;
  meminfo(s).mem_free_bytes = UINT64_MAX;
  meminfo(s).swap_free_bytes = 2;
  meminfo(s).cached_bytes = UINT64_MAX;
  meminfo(s).dirty_bytes = UINT64_MAX;
  meminfo(s).writeback_bytes = 5;
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->available_bytes, UINT64_MAX);
  EXPECT_EQ(h->bytes, INT64_MAX - static_cast<int64_t>(8 * kGiB));
  EXPECT_EQ(h->without_cache_bytes, h->bytes);
  EXPECT_EQ(h->page_cache_bytes, UINT64_MAX - 152'340 * kKb);
  EXPECT_EQ(h->reclaimable_cache_bytes, 0u);

  meminfo(s).hugepages_total = 1;
  meminfo(s).hugepages_free = uint64_t{1} << 40;
  meminfo(s).hugepage_size_bytes = uint64_t{1} << 30;
  h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->available_bytes, UINT64_MAX);
}

TEST(ComputeHeadroom, HugepagesReplaceMemAvailableAndIgnoreSwap) {
  Snapshot s = gb10_snapshot();
  meminfo(s).hugepages_total = 40'000;
  meminfo(s).hugepages_free = 30'000;
  meminfo(s).swap_free_bytes = 15 * kGiB;
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->hugepages);
  EXPECT_EQ(h->available_bytes, 30'000 * 2 * kMiB);
  EXPECT_EQ(h->bytes, static_cast<int64_t>(30'000 * 2 * kMiB) - static_cast<int64_t>(8 * kGiB));
  EXPECT_EQ(h->without_cache_bytes, h->bytes);
}

TEST(ComputeHeadroom, GoesNegativeBelowTheFloor) {
  Snapshot s = gb10_snapshot();
  meminfo(s).mem_available_bytes = 5 * kGiB;
  meminfo(s).mem_free_bytes = 1 * kGiB;
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->bytes, -static_cast<int64_t>(3 * kGiB));
}

TEST(ComputeHeadroom, ReclaimableNeverNegative) {
  Snapshot s = gb10_snapshot();
  meminfo(s).dirty_bytes = 50 * kGB;
  meminfo(s).shmem_bytes = 1 * kGB;
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->reclaimable_cache_bytes, 0u);
  meminfo(s).shmem_bytes = 10 * kGB;  // more shared memory than Cached + Buffers
  h = headroom_of(s);
  EXPECT_EQ(h->page_cache_bytes, 0u);
}

TEST(ComputeHeadroom, DiscreteUsesGpuZeroFreeMemoryWithoutFloor) {
  Snapshot s = h200_snapshot();
  auto h = headroom_of(s);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->available_bytes, 143'100 * kMiB);
  EXPECT_EQ(h->bytes, static_cast<int64_t>(143'100 * kMiB));
  EXPECT_EQ(h->floor_bytes, 0u);
  ASSERT_TRUE(h->device);
  EXPECT_EQ(*h->device, 0u);
}

TEST(ComputeHeadroom, MissingMeminfoGivesNothing) {
  Snapshot s = gb10_snapshot();
  s.meminfo = Reading<sys::MemInfo>::absent(Why::kNoPermission, "/proc/meminfo: EACCES");
  EXPECT_FALSE(headroom_of(s));
}

TEST(ComputeHeadroom, DiscreteWithoutGpuMemoryGivesNothing) {
  Snapshot s = h200_snapshot();
  s.gpu.nvml->devices[0].memory =
      Reading<gpu::MemoryInfo>::absent(Why::kError, "NVML_ERROR_UNKNOWN");
  EXPECT_FALSE(headroom_of(s));
}

}  // namespace
}  // namespace sparkdoc::checks
