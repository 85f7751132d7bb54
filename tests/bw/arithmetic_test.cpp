// The arithmetic and the pure choices of `sparkdoc bw`: which bytes a run counts, best and
// median, the buffer sizes, the nominal table, and the record the snapshot keeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bw/device.h"
#include "bw/host.h"
#include "bw/nominal.h"
#include "bw/record.h"
#include "bw/stats.h"

namespace sparkdoc::bw {
namespace {

using ::testing::HasSubstr;

TEST(Counting, ACopyCountsTheBytesReadAndTheBytesWritten) {
  EXPECT_EQ(copy_traffic_bytes(kGiB), 2 * kGiB);
  EXPECT_EQ(copy_traffic_bytes(0), 0u);
}

TEST(Counting, GigabytesAreDecimal) {
  EXPECT_DOUBLE_EQ(gbps(2'000'000'000, 1000.0), 2.0);
  EXPECT_DOUBLE_EQ(gbps(1'000'000'000, 1.0), 1000.0);
}

// The community figure: x.clone() of a 2 GiB tensor in 1 ms reads 2 GiB and writes 2 GiB.
TEST(Counting, TwoGibCloneInOneMillisecondIsAboutTheTorchFigure) {
  auto rate = summarize(std::vector<double>{1.0}, copy_traffic_bytes(2 * kGiB));
  ASSERT_TRUE(rate) << rate.error().message;
  EXPECT_NEAR(rate->median_gbps, 4294.967, 0.001);
}

TEST(Summary, BestIsTheFastestRunAndMedianTheMiddleTime) {
  auto rate = summarize(std::vector<double>{4.0, 1.0, 2.0, 3.0}, 2'000'000'000);
  ASSERT_TRUE(rate) << rate.error().message;
  EXPECT_DOUBLE_EQ(rate->best_gbps, 2000.0);   // 1 ms
  EXPECT_DOUBLE_EQ(rate->median_gbps, 800.0);  // (2 + 3) / 2 = 2.5 ms
  EXPECT_EQ(rate->runs, 4);
  EXPECT_EQ(rate->bytes_per_run, 2'000'000'000u);
  auto odd = summarize(std::vector<double>{5.0, 1.0, 2.0}, 1'000'000'000);
  ASSERT_TRUE(odd);
  EXPECT_DOUBLE_EQ(odd->median_gbps, 500.0);  // 2 ms
}

TEST(Summary, NoRunsOrATimerThatDidNotTickIsAnError) {
  EXPECT_FALSE(summarize(std::vector<double>{}, 1));
  EXPECT_FALSE(summarize(std::vector<double>{1.0, 0.0}, 1));
  EXPECT_FALSE(summarize(std::vector<double>{-1.0}, 1));
  EXPECT_FALSE(summarize(std::vector<double>{std::numeric_limits<double>::quiet_NaN()}, 1));
  EXPECT_FALSE(summarize(std::vector<double>{std::numeric_limits<double>::infinity()}, 1));
}

TEST(BufferSize, DefaultIsTwoGibWhenItFitsInHalfOfTheFreeMemory) {
  auto c = choose_buffer_bytes(std::nullopt, 140 * kGB);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, 2 * kGiB);
  EXPECT_FALSE(c->note);
  auto exact = choose_buffer_bytes(std::nullopt, 8 * kGiB);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->bytes, 2 * kGiB);
}

TEST(BufferSize, DefaultIsCappedToAQuarterOfTheFreeMemory) {
  auto c = choose_buffer_bytes(std::nullopt, 4 * kGiB + 12345);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, kGiB);
  ASSERT_TRUE(c->note);
  EXPECT_THAT(*c->note, HasSubstr("instead of 2.0 GiB"));
}

TEST(BufferSize, TooLittleFreeMemoryForAMemoryMeasurementIsAnError) {
  auto c = choose_buffer_bytes(std::nullopt, 512 * kMiB);
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("at least 256.0 MiB"));
  EXPECT_THAT(c.error().message, HasSubstr("--size"));
}

TEST(BufferSize, AGivenSizeIsUsedAsItIsWithACautionWhenSmall) {
  auto big = choose_buffer_bytes(4 * kGiB, 1 * kMiB);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->bytes, 4 * kGiB);
  EXPECT_FALSE(big->note);
  auto small = choose_buffer_bytes(kMiB, 140 * kGB);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->bytes, kMiB);
  ASSERT_TRUE(small->note);
  EXPECT_THAT(*small->note, HasSubstr("L2 cache"));
  EXPECT_FALSE(choose_buffer_bytes(uint64_t{0}, kGiB));
}

TEST(BufferSize, HostBuffersTakeAtMostHalfOfWhatIsAvailable) {
  EXPECT_EQ(cap_host_buffer(2 * kGiB, std::nullopt).bytes, 2 * kGiB);
  EXPECT_EQ(cap_host_buffer(2 * kGiB, 100 * kGiB).bytes, 2 * kGiB);
  SizeChoice c = cap_host_buffer(2 * kGiB, 4 * kGiB);
  EXPECT_EQ(c.bytes, kGiB);
  ASSERT_TRUE(c.note);
  EXPECT_THAT(*c.note, HasSubstr("host buffers of 1.0 GiB"));
}

TEST(Nominal, KnownDevicesByTheirExactName) {
  auto h200 = nominal_bandwidth("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->gbps, 4800);
  EXPECT_EQ(h200->memory, "HBM3e");
  EXPECT_EQ(nominal_bandwidth(" nvidia h200 ")->gbps, 4800);
  EXPECT_EQ(nominal_bandwidth("NVIDIA H100 80GB HBM3")->gbps, 3350);
  EXPECT_EQ(nominal_bandwidth("NVIDIA A10")->gbps, 600);
  EXPECT_EQ(nominal_bandwidth("NVIDIA A100-SXM4-80GB")->gbps, 2039);
  EXPECT_EQ(gb10_nominal().gbps, 273);
}

TEST(Nominal, AnUnknownNameHasNoFigure) {
  EXPECT_FALSE(nominal_bandwidth("NVIDIA JMJWOA-Generic-GPU"));
  EXPECT_FALSE(nominal_bandwidth("NVIDIA H20"));
  EXPECT_FALSE(nominal_bandwidth(""));
}

TEST(Nominal, NamesAreUniqueAndFiguresPositive) {
  std::set<std::string> names;
  for (const Nominal& n : nominal_table()) {
    EXPECT_TRUE(names.insert(std::string(n.device_name)).second) << n.device_name;
    EXPECT_GT(n.gbps, 0) << n.device_name;
  }
}

DeviceResult h200_result() {
  DeviceResult d;
  d.name = "NVIDIA H200";
  d.buffer_bytes = 2 * kGiB;
  d.warmup_runs = 3;
  d.copy = TransferRate{4310.0, 4297.0, copy_traffic_bytes(2 * kGiB), 20};
  d.h2d = TransferRate{55.3, 55.1, 2 * kGiB, 20};
  d.d2h = Reading<TransferRate>::absent(Why::kError, "cuMemcpyDtoHAsync_v2 returned ...");
  return d;
}

TEST(Record, TheMeasurementSaysWhatItCounted) {
  HostBandwidth host;
  host.threads = 16;
  host.copy = TransferRate{120, 110, 4 * kGiB, 20};
  auto m = to_measurement(h200_result(), host, nominal_bandwidth("NVIDIA H200"),
                          "2026-11-30T12:00:00Z");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->device_copy_gbps, 4297.0);
  EXPECT_DOUBLE_EQ(m->device_copy_best_gbps, 4310.0);
  EXPECT_THAT(m->method, HasSubstr("read + write bytes counted (2 x 2.0 GiB per copy)"));
  EXPECT_THAT(m->method, HasSubstr("median of 20 timed copies after 3 warm-up"));
  EXPECT_EQ(m->device_name, "NVIDIA H200");
  EXPECT_EQ(m->buffer_bytes, 2 * kGiB);
  EXPECT_EQ(m->nominal_gbps, 4800.0);
  EXPECT_EQ(m->nominal_source, "NVIDIA H200, HBM3e");
  EXPECT_TRUE(m->h2d);
  EXPECT_FALSE(m->d2h);
  ASSERT_TRUE(m->host);
  EXPECT_EQ(m->host->threads, 16u);
  EXPECT_EQ(m->taken_at, "2026-11-30T12:00:00Z");
}

TEST(Record, NoDriverIsAFailedMeasurementNotAMissingOne) {
  Result<DeviceResult> none = fail(Why::kAbsent, "libcuda.so.1 not found");
  auto m = to_measurement(none, Reading<HostBandwidth>(), std::nullopt, "");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.missing().why, Why::kError);
  EXPECT_EQ(m.missing().detail, "libcuda.so.1 not found");
  Result<DeviceResult> denied = fail(Why::kNoPermission, "CUDA_ERROR_NOT_PERMITTED");
  EXPECT_EQ(to_measurement(denied, {}, std::nullopt, "").missing().why, Why::kNoPermission);
}

TEST(Record, TextNamesTheBytesEachFigureCounts) {
  BwReport r;
  r.device = h200_result();
  r.nominal = nominal_bandwidth("NVIDIA H200");
  r.host = Reading<HostBandwidth>::absent(Why::kAbsent, "not measured (--no-host)");
  std::string text = render_bw_text(r);
  EXPECT_THAT(text, HasSubstr("NVIDIA H200 (device 0)"));
  EXPECT_THAT(text, HasSubstr("4297.0 GB/s"));
  EXPECT_THAT(text, HasSubstr("read + write, 2 x 2.0 GiB (cuMemcpyDtoDAsync)"));
  EXPECT_THAT(text, HasSubstr("pinned D2H   not measured: error: cuMemcpyDtoHAsync_v2"));
  EXPECT_THAT(text, HasSubstr("host         not measured: absent: not measured (--no-host)"));
  EXPECT_THAT(text, HasSubstr("the device copy (median) is 89.5 % of it"));
  r.nominal.reset();
  EXPECT_THAT(render_bw_text(r), HasSubstr("nominal: unknown for NVIDIA H200"));
}

TEST(Record, JsonCarriesTheSnapshotFormAndTheHostFigures) {
  BwReport r;
  r.device = fail(Why::kAbsent, "libcuda.so.1 not found");
  HostBandwidth host;
  host.threads = 2;
  r.host = host;
  r.notes.push_back("a note");
  nlohmann::json j = render_bw_json(r);
  EXPECT_EQ(j["bandwidth"]["absent"], "error");
  EXPECT_EQ(j["bandwidth"]["detail"], "libcuda.so.1 not found");
  EXPECT_EQ(j["host"]["threads"], 2);
  EXPECT_EQ(j["notes"][0], "a note");
  EXPECT_THAT(render_bw_text(r), HasSubstr("device 0: not measured: libcuda.so.1 not found"));
}

}  // namespace
}  // namespace sparkdoc::bw
