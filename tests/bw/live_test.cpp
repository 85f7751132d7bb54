// A small measurement on the machine's own GPU (label gpu). Skips where there is no driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "bw/device.h"
#include "bw/host.h"
#include "gpu/cuda_api.h"

namespace sparkdoc::bw {
namespace {

TEST(LiveBw, MeasuresTheInstalledGpu) {
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "/dev/nvidiactl does not exist: no NVIDIA driver on this machine";
  }
  const auto& cuda = gpu::Cuda::instance();
  ASSERT_TRUE(cuda) << cuda.error().message;
  DeviceOptions o;
  o.buffer_bytes = 256 * kMiB;
  o.runs = 5;
  o.warmup_runs = 2;
  auto r = measure_device(*cuda, o);
  ASSERT_TRUE(r) << r.error().message;
  std::cout << r->name << ": device copy median " << r->copy.median_gbps << " GB/s, best "
            << r->copy.best_gbps << " GB/s (read + write)\n";
  EXPECT_GT(r->copy.median_gbps, 50.0);
  ASSERT_TRUE(r->h2d) << r->h2d.reason();
  ASSERT_TRUE(r->d2h) << r->d2h.reason();
  std::cout << "pinned H2D median " << r->h2d->median_gbps << " GB/s, D2H median "
            << r->d2h->median_gbps << " GB/s\n";
  EXPECT_GT(r->h2d->median_gbps, 1.0);
  EXPECT_GT(r->d2h->median_gbps, 1.0);
  // The same again: everything of the first run was released.
  auto again = measure_device(*cuda, o);
  ASSERT_TRUE(again) << again.error().message;
}

}  // namespace
}  // namespace sparkdoc::bw
