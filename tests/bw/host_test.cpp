// Host memory bandwidth on small buffers: what each run counts, the threads, the progress.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bw/host.h"

namespace sparkdoc::bw {
namespace {

HostOptions small(uint64_t bytes, unsigned threads) {
  HostOptions o;
  o.buffer_bytes = bytes;
  o.threads = threads;
  o.runs = 2;
  o.warmup_runs = 1;
  return o;
}

TEST(Host, ReadAndWriteCountTheBufferOnceACopyTwice) {
  auto h = measure_host(small(4 * kMiB, 2));
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->threads, 2u);
  EXPECT_EQ(h->buffer_bytes, 4 * kMiB);
  EXPECT_EQ(h->read.bytes_per_run, 4 * kMiB);
  EXPECT_EQ(h->write.bytes_per_run, 4 * kMiB);
  EXPECT_EQ(h->copy.bytes_per_run, 8 * kMiB);
  for (const TransferRate* r : {&h->read, &h->write, &h->copy}) {
    EXPECT_EQ(r->runs, 2);
    EXPECT_GT(r->median_gbps, 0);
    EXPECT_GE(r->best_gbps, r->median_gbps);
  }
}

TEST(Host, OneThreadPerUsableCpuByDefault) {
  auto h = measure_host(small(4 * kMiB, 0));
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->threads, usable_cpus().size());
}

TEST(Host, EveryThreadGetsAtLeastAPage) {
  auto h = measure_host(small(8192 + 100, 16));
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->threads, 2u);
  EXPECT_EQ(h->buffer_bytes, 8192u);
  EXPECT_FALSE(measure_host(small(100, 1)));
}

TEST(Host, ProgressNamesEachPhase) {
  std::vector<std::string> phases;
  auto h = measure_host(small(kMiB, 2), [&](std::string_view phase, int done, int total) {
    EXPECT_LE(done, total);
    EXPECT_EQ(total, 3);
    if (phases.empty() || phases.back() != phase) phases.emplace_back(phase);
  });
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(phases, (std::vector<std::string>{"host read", "host write", "host copy"}));
}

TEST(Host, UnpinnedWhenAskedSo) {
  HostOptions o = small(kMiB, 2);
  o.pin = false;
  auto h = measure_host(o);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_FALSE(h->pinned);
}

TEST(Host, UsableCpusAreAscendingAndNotEmpty) {
  std::vector<int> cpus = usable_cpus();
  ASSERT_FALSE(cpus.empty());
  for (size_t i = 1; i < cpus.size(); ++i) EXPECT_LT(cpus[i - 1], cpus[i]);
}

}  // namespace
}  // namespace sparkdoc::bw
