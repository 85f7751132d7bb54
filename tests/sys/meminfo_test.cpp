#include "sys/meminfo.h"

#include <gtest/gtest.h>

namespace sparkdoc::sys {
namespace {

// Idle GB10 (DGX Spark), driver 580.x: gb10-nvml-dcgm §3.2.
constexpr std::string_view kGb10Meminfo =
    "MemTotal:       127600748 kB\n"
    "MemFree:        116012344 kB\n"
    "MemAvailable:   118566368 kB\n"
    "Buffers:           120004 kB\n"
    "Cached:           3900012 kB\n"
    "SwapCached:             0 kB\n"
    "Active:           3512340 kB\n"
    "Inactive:         2788004 kB\n"
    "Active(anon):     2212004 kB\n"
    "Inactive(anon):      9004 kB\n"
    "Active(file):     1300336 kB\n"
    "Inactive(file):   2779000 kB\n"
    "Unevictable:        30720 kB\n"
    "Mlocked:            27648 kB\n"
    "SwapTotal:       15624996 kB\n"
    "SwapFree:        15624996 kB\n"
    "Dirty:               2000 kB\n"
    "Writeback:              0 kB\n"
    "AnonPages:        2500004 kB\n"
    "Mapped:            600004 kB\n"
    "Shmem:              90000 kB\n"
    "KReclaimable:     1100040 kB\n"
    "Slab:             1900044 kB\n"
    "SReclaimable:     1100040 kB\n"
    "SUnreclaim:        800004 kB\n"
    "KernelStack:        40448 kB\n"
    "PageTables:        120012 kB\n"
    "VmallocTotal:   135288315904 kB\n"
    "HugePages_Total:       0\n"
    "HugePages_Free:        0\n"
    "HugePages_Rsvd:        0\n"
    "HugePages_Surp:        0\n"
    "Hugepagesize:       2048 kB\n"
    "Hugetlb:                0 kB\n";

TEST(Meminfo, Gb10IdleNumbersBecomeBytes) {
  auto m = parse_meminfo(kGb10Meminfo);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->mem_total_bytes, 127600748ull * 1024);
  EXPECT_EQ(m->mem_available_bytes, 118566368ull * 1024);
  EXPECT_EQ(m->mem_free_bytes, 116012344ull * 1024);
  EXPECT_EQ(m->buffers_bytes, 120004ull * 1024);
  EXPECT_EQ(m->cached_bytes, 3900012ull * 1024);
  EXPECT_EQ(m->active_file_bytes, 1300336ull * 1024);
  EXPECT_EQ(m->inactive_file_bytes, 2779000ull * 1024);
  EXPECT_EQ(m->anon_pages_bytes, 2500004ull * 1024);
  EXPECT_EQ(m->mapped_bytes, 600004ull * 1024);
  EXPECT_EQ(m->shmem_bytes, 90000ull * 1024);
  EXPECT_EQ(m->dirty_bytes, 2000ull * 1024);
  EXPECT_EQ(m->mlocked_bytes, 27648ull * 1024);
  EXPECT_EQ(m->swap_total_bytes, 15624996ull * 1024);
  EXPECT_EQ(m->swap_free_bytes, 15624996ull * 1024);
  EXPECT_EQ(m->hugepages_total, 0u);
  EXPECT_EQ(m->hugepage_size_bytes, 2048u * 1024);
  EXPECT_EQ(m->slab_bytes, 1900044ull * 1024);
  EXPECT_EQ(m->slab_reclaimable_bytes, 1100040ull * 1024);
  EXPECT_EQ(m->kernel_stack_bytes, 40448ull * 1024);
  EXPECT_EQ(m->page_tables_bytes, 120012ull * 1024);
}

// KReclaimable and SUnreclaim share prefixes with the fields read; only exact names count.
TEST(Meminfo, KernelFieldsMatchByExactName) {
  auto m = parse_meminfo("MemTotal: 10 kB\nKReclaimable: 7 kB\nSUnreclaim: 5 kB\nSlab: 3 kB\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->slab_bytes, 3u * 1024);
  EXPECT_EQ(m->slab_reclaimable_bytes, 0u);
  EXPECT_FALSE(parse_meminfo("MemTotal: 10 kB\nPageTables: 4\n"));  // kB unit required
}

TEST(Meminfo, HugePagesAreCountsNotBytes) {
  auto m = parse_meminfo(
      "MemTotal: 263781896 kB\nHugePages_Total:    1024\nHugePages_Free:     1000\n"
      "HugePages_Rsvd:        8\nHugepagesize:       2048 kB\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hugepages_total, 1024u);
  EXPECT_EQ(m->hugepages_free, 1000u);
  EXPECT_EQ(m->hugepages_rsvd, 8u);
  EXPECT_EQ(m->hugepage_size_bytes, 2097152u);
  EXPECT_EQ(m->mem_available_bytes, 0u);  // missing fields stay 0
}

TEST(Meminfo, RejectsTextWithoutMemTotal) {
  EXPECT_FALSE(parse_meminfo(""));
  EXPECT_FALSE(parse_meminfo("MemFree: 1 kB\nMemAvailable: 2 kB\n"));
  EXPECT_FALSE(
      parse_meminfo("\x7f"
                    "ELF\x02\x01\x01"));
}

TEST(Meminfo, RejectsMalformedKnownFields) {
  EXPECT_FALSE(parse_meminfo("MemTotal: lots kB\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal: 127600748 MB\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal: 127600748\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal:\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal: -5 kB\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal: 1 kB\nHugePages_Total: 4 kB\n"));
  EXPECT_FALSE(parse_meminfo("MemTotal: 18446744073709551615 kB\n"));  // overflows in bytes
}

TEST(Meminfo, TruncatedTextKeepsWhatWasWhole) {
  // Cut mid-file: the lines before the cut parse, the cut line's field is rejected or absent.
  auto m = parse_meminfo("MemTotal:       127600748 kB\nMemFree:        1160");
  EXPECT_FALSE(m);  // "MemFree: 1160" lost its unit
  auto cut_at_name = parse_meminfo("MemTotal:       127600748 kB\nMemFr");
  ASSERT_TRUE(cut_at_name);
  EXPECT_EQ(cut_at_name->mem_free_bytes, 0u);
}

TEST(Meminfo, IgnoresUnknownAndOddLines) {
  auto m = parse_meminfo("garbage line\nMemTotal: 10 kB\nDirectMap4k: 1 kB\nno colon here\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mem_total_bytes, 10240u);
}

TEST(Meminfo, MissingFileIsAbsent) {
  auto m = read_meminfo(Root("/nonexistent-sparkdoc-root"));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::sys
