// One `sparkdoc bw` run without a driver: the device part says why it is missing, the host is
// measured all the same, and the nominal figure follows the platform.
#include "bw/measure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "bw/nominal.h"

namespace sparkdoc::bw {
namespace {

using ::testing::HasSubstr;

RunOptions small() {
  // The driver is loaded once per process: every test here runs without one.
  ::setenv("SPARKDOC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  RunOptions o;
  o.buffer_bytes = 1 << 20;
  o.runs = 1;
  o.warmup_runs = 0;
  o.threads = 1;
  return o;
}

TEST(Measure, WithoutADriverTheHostIsStillMeasured) {
  facts::Platform discrete;
  discrete.kind = facts::PlatformKind::kDiscrete;
  int reports = 0;
  BwReport r = measure(small(), discrete, [&](std::string_view, int, int) { ++reports; });
  EXPECT_FALSE(r.device);
  EXPECT_THAT(r.device.error().message, HasSubstr("/nonexistent/libcuda.so.1"));
  EXPECT_TRUE(r.host.ok()) << r.host.reason();
  EXPECT_GT(reports, 0);
  EXPECT_EQ(r.nominal, std::nullopt);  // no device name to look up
  EXPECT_FALSE(r.taken_at.empty());
}

TEST(Measure, OnADgxSparkTheNominalFigureIsGb10s) {
  facts::Platform spark;
  spark.kind = facts::PlatformKind::kDgxSpark;
  RunOptions o = small();
  o.host = false;
  BwReport r = measure(o, spark);
  ASSERT_TRUE(r.nominal);
  EXPECT_EQ(r.nominal->device_name, gb10_nominal().device_name);
  EXPECT_FALSE(r.host.ok());
  EXPECT_THAT(r.host.reason(), HasSubstr("--no-host"));
}

}  // namespace
}  // namespace sparkdoc::bw
