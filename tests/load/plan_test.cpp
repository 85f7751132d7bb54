// Cutting a plan of copies into reads, and validating a plan against file sizes.
#include "load/plan.h"

#include <gtest/gtest.h>

#include <array>

#include "load/memory_watch.h"

namespace sparkdoc::load {
namespace {

Copy copy(uint32_t file, uint64_t offset, uint64_t length, uint64_t destination,
          std::string label = "tensor 't'") {
  return Copy{file, offset, length, destination, std::move(label)};
}

ChunkOptions options(uint64_t max_bytes, uint64_t gap = 1024) {
  ChunkOptions o;
  o.max_bytes = max_bytes;
  o.align = 4096;
  o.max_gap_bytes = gap;
  return o;
}

TEST(ChunkPlan, PacksConsecutiveSmallCopiesIntoOneRead) {
  CopyPlan plan;
  plan.files = {"a"};
  plan.copies = {copy(0, 100, 10, 0x1000), copy(0, 110, 20, 0x9000), copy(0, 130, 5, 0x5000)};
  ChunkedPlan out = chunk_plan(plan, options(1 << 20));
  ASSERT_EQ(out.chunks.size(), 1u);
  EXPECT_EQ(out.chunks[0], (Chunk{0, 100, 135, 0, 3}));
  EXPECT_EQ(out.segments[1], (Segment{1, 110, 20, 0x9000}));
  EXPECT_EQ(out.copy_bytes, 35u);
  EXPECT_EQ(out.read_bytes, 35u);
}

TEST(ChunkPlan, SplitsALongCopyOnAlignedBoundaries) {
  CopyPlan plan;
  plan.files = {"a"};
  // 100 bytes past 8192, 40000 bytes long, reads of at most 16384 bytes.
  plan.copies = {copy(0, 8292, 40000, 0x100000)};
  ChunkedPlan out = chunk_plan(plan, options(16384));
  ASSERT_EQ(out.chunks.size(), 3u);
  EXPECT_EQ(out.chunks[0].begin, 8292u);
  EXPECT_EQ(out.chunks[0].end, 8192u + 16384u);  // the first read ends on a boundary
  EXPECT_EQ(out.chunks[1].begin, 8192u + 16384u);
  EXPECT_EQ(out.chunks[1].end, 8192u + 2 * 16384u);
  EXPECT_EQ(out.chunks[2].end, 8292u + 40000u);
  // The destinations advance with the file offsets.
  EXPECT_EQ(out.segments[1].destination, 0x100000u + (8192 + 16384 - 8292));
  uint64_t total = 0;
  for (const auto& s : out.segments) total += s.length;
  EXPECT_EQ(total, 40000u);
}

TEST(ChunkPlan, ReadsThroughSmallHolesAndStartsAnewAfterLargeOnes) {
  CopyPlan plan;
  plan.files = {"a"};
  plan.copies = {copy(0, 0, 100, 0x1000), copy(0, 600, 100, 0x2000),  // hole of 500: read
                 copy(0, 5000, 100, 0x3000)};                         // hole of 4300: new read
  ChunkedPlan out = chunk_plan(plan, options(1 << 20, 1024));
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[0].end, 700u);
  EXPECT_EQ(out.chunks[0].segment_count, 2u);
  EXPECT_EQ(out.chunks[1].begin, 5000u);
  EXPECT_EQ(out.read_bytes, 800u);
}

TEST(ChunkPlan, KeepsFilesApartSkipsEmptyCopiesAndSortsByOffset) {
  CopyPlan plan;
  plan.files = {"a", "b"};
  plan.copies = {copy(1, 0, 10, 0x1000), copy(0, 50, 10, 0x2000), copy(0, 60, 0, 0),
                 copy(0, 0, 50, 0x3000)};
  ChunkedPlan out = chunk_plan(plan, options(1 << 20));
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[0], (Chunk{0, 0, 60, 0, 2}));
  EXPECT_EQ(out.segments[0].copy, 3u);
  EXPECT_EQ(out.chunks[1], (Chunk{1, 0, 10, 2, 1}));
}

TEST(ChunkPlan, OverlappingCopiesEachGetTheirBytes) {
  CopyPlan plan;
  plan.files = {"a"};
  plan.copies = {copy(0, 0, 100, 0x1000), copy(0, 40, 20, 0x9000)};
  ChunkedPlan out = chunk_plan(plan, options(1 << 20));
  ASSERT_EQ(out.chunks.size(), 1u);
  EXPECT_EQ(out.chunks[0].end, 100u);
  EXPECT_EQ(out.segments[1], (Segment{1, 40, 20, 0x9000}));
}

TEST(ValidatePlan, NamesTheTensorAndFileOfACopyPastTheEnd) {
  CopyPlan plan;
  plan.files = {"shard.safetensors"};
  plan.copies = {copy(0, 90, 20, 0x1000, "tensor 'w'")};
  std::array<uint64_t, 1> sizes{100};
  auto checked = validate_plan(plan, sizes);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().fault, Fault::kIo);
  EXPECT_NE(checked.error().message.find("tensor 'w' in shard.safetensors"), std::string::npos)
      << checked.error().message;
  EXPECT_NE(checked.error().message.find("[90, 110)"), std::string::npos);
}

TEST(ValidatePlan, RefusesMissingDestinationsAndUnknownFilesButAllowsEmptyCopies) {
  CopyPlan plan;
  plan.files = {"a"};
  std::array<uint64_t, 1> sizes{100};
  plan.copies = {copy(0, 0, 10, 0)};
  EXPECT_EQ(validate_plan(plan, sizes).error().fault, Fault::kInvalidArgument);
  plan.copies = {copy(1, 0, 10, 0x1000)};
  EXPECT_EQ(validate_plan(plan, sizes).error().fault, Fault::kInvalidArgument);
  plan.copies = {copy(0, 100, 0, 0)};
  EXPECT_TRUE(validate_plan(plan, sizes));
  // Offsets near 2^64 do not wrap around the size check.
  plan.copies = {copy(0, ~uint64_t{0} - 4, 10, 0x1000)};
  EXPECT_FALSE(validate_plan(plan, sizes));
}

TEST(ProcessStatus, ReadsRssAndPeak) {
  auto m = parse_process_status("Name:\tpython3\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->rss_bytes, 102400u * 1024);
  EXPECT_EQ(m->peak_rss_bytes, 204800u * 1024);
  EXPECT_FALSE(parse_process_status("VmRSS:\t12 kB\n"));
  EXPECT_FALSE(parse_process_status("VmRSS:\tx kB\nVmHWM:\t1 kB\n"));
}

}  // namespace
}  // namespace sparkdoc::load
