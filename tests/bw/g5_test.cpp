// A measurement saved into a snapshot is what `check` judges (G5): written, read back, and
// judged on a DGX Spark fixture (PASS at the budget, WARN below) and an H200 (INFO against its
// nominal figure). Snapshots written before the new keys still read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bw/nominal.h"
#include "bw/record.h"
#include "bw/stats.h"
#include "checks/registry.h"
#include "core/fs.h"
#include "model/snapshot_json.h"

namespace sparkdoc::bw {
namespace {

using ::testing::HasSubstr;

Snapshot fixture(const std::string& name) {
  auto text = read_text(std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name, 64u << 20);
  EXPECT_TRUE(text) << name;
  auto s = snapshot_from_text(text ? *text : "");
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : Snapshot{};
}

DeviceResult device(std::string name, double median_gbps) {
  DeviceResult d;
  d.name = std::move(name);
  d.buffer_bytes = 2 * kGiB;
  d.warmup_runs = 3;
  d.copy = TransferRate{median_gbps * 1.01, median_gbps, copy_traffic_bytes(2 * kGiB), 20};
  d.h2d = TransferRate{55.3, 55.1, 2 * kGiB, 20};
  d.d2h = TransferRate{55.2, 55.0, 2 * kGiB, 20};
  return d;
}

// The snapshot as `sparkdoc bw --save` writes it and `check --snapshot` reads it.
Snapshot saved(Snapshot s, const DeviceResult& d, std::optional<Nominal> nominal) {
  HostBandwidth host;
  host.threads = 20;
  host.pinned = true;
  host.buffer_bytes = 2 * kGiB;
  host.read = TransferRate{110, 105, 2 * kGiB, 20};
  host.write = TransferRate{80, 78, 2 * kGiB, 20};
  host.copy = TransferRate{150, 148, 4 * kGiB, 20};
  s.bandwidth = to_measurement(d, host, nominal, "2026-11-30T12:00:00Z");
  auto back = snapshot_from_text(snapshot_to_text(s));
  EXPECT_TRUE(back) << (back ? "" : back.error().message);
  EXPECT_EQ(*back, s);
  return *back;
}

checks::Finding g5(const Snapshot& s) { return checks::run_checks(s, Workload{}, {"G5"}).at(0); }

TEST(SavedMeasurement, SparkAtTheBudgetPasses) {
  Snapshot s = saved(fixture("gb10-healthy-ngc.json"), device("NVIDIA GB10", 185.3), gb10_nominal());
  checks::Finding f = g5(s);
  EXPECT_EQ(f.verdict, checks::Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("measured 185.3 GB/s device copy (read + write)"));
  EXPECT_THAT(f.details, ::testing::Contains(HasSubstr("pinned host to device: median 55.1")));
  EXPECT_THAT(f.details, ::testing::Contains(HasSubstr("host memory, 20 threads")));
}

TEST(SavedMeasurement, SparkBelowTheBudgetWarns) {
  Snapshot s = saved(fixture("gb10-healthy-ngc.json"), device("NVIDIA GB10", 150.0), gb10_nominal());
  checks::Finding f = g5(s);
  EXPECT_EQ(f.verdict, checks::Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("150.0 GB/s device copy (read + write), below the 180-192"));
}

TEST(SavedMeasurement, H200IsInfoAgainstItsNominalFigure) {
  Snapshot s = saved(fixture("h200-idle.json"), device("NVIDIA H200", 4297.0),
                     nominal_bandwidth("NVIDIA H200"));
  checks::Finding f = g5(s);
  EXPECT_EQ(f.verdict, checks::Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("measured 4297.0 GB/s device copy (read + write); 89.5 % of "
                                  "the nominal 4800 GB/s (NVIDIA H200, HBM3e)"));
}

TEST(SavedMeasurement, AnUnknownDeviceSaysSo) {
  Snapshot s = saved(fixture("h200-idle.json"), device("NVIDIA H20", 3500.0), std::nullopt);
  EXPECT_THAT(g5(s).detail, HasSubstr("nominal unknown for NVIDIA H20"));
}

TEST(SavedMeasurement, AFailedMeasurementSkipsWithItsReason) {
  Snapshot s = fixture("h200-idle.json");
  s.bandwidth = to_measurement(fail(Why::kAbsent, "libcuda.so.1 not found"), {}, std::nullopt, "");
  auto back = snapshot_from_text(snapshot_to_text(s));
  ASSERT_TRUE(back);
  checks::Finding f = g5(*back);
  EXPECT_EQ(f.verdict, checks::Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("the bandwidth measurement failed: libcuda.so.1 not found"));
}

// A snapshot saved before the transfer, host and nominal keys existed.
TEST(SavedMeasurement, TheFirstFormStillReads) {
  Snapshot s = fixture("gb10-healthy-ngc.json");
  nlohmann::json j = snapshot_to_json(s);
  j["bandwidth"] = {{"device_copy_gbps", 185.3},
                    {"method", "sm copy kernel, 4 GiB"},
                    {"taken_at", "2026-11-29T12:01:00Z"}};
  auto back = snapshot_from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->bandwidth);
  EXPECT_DOUBLE_EQ(back->bandwidth->device_copy_gbps, 185.3);
  EXPECT_FALSE(back->bandwidth->h2d);
  EXPECT_FALSE(back->bandwidth->host);
  EXPECT_FALSE(back->bandwidth->nominal_gbps);
  EXPECT_EQ(g5(*back).verdict, checks::Verdict::kPass);
  Snapshot h200 = fixture("h200-idle.json");
  h200.bandwidth = back->bandwidth;
  checks::Finding info = g5(h200);
  EXPECT_EQ(info.verdict, checks::Verdict::kInfo);
  EXPECT_EQ(info.detail, "measured 185.3 GB/s device copy (read + write)");
}

TEST(SavedMeasurement, KeysAreTheDocumentedOnes) {
  Snapshot s = saved(fixture("h200-idle.json"), device("NVIDIA H200", 4297.0),
                     nominal_bandwidth("NVIDIA H200"));
  nlohmann::json b = snapshot_to_json(s)["bandwidth"];
  for (const char* key : {"device_copy_gbps", "method", "taken_at", "device_copy_best_gbps",
                          "device_name", "device_ordinal", "buffer_bytes", "nominal_gbps",
                          "nominal_source", "h2d", "d2h", "host"}) {
    EXPECT_TRUE(b.contains(key)) << key;
  }
  EXPECT_EQ(b.size(), 12u);
  for (const char* key : {"best_gbps", "median_gbps", "bytes_per_run", "runs"}) {
    EXPECT_TRUE(b["h2d"].contains(key)) << key;
  }
  for (const char* key : {"threads", "pinned", "buffer_bytes", "read", "write", "copy"}) {
    EXPECT_TRUE(b["host"].contains(key)) << key;
  }
}

}  // namespace
}  // namespace sparkdoc::bw
