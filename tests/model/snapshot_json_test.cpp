#include "model/snapshot_json.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(SnapshotJson, DefaultRoundTrips) {
  Snapshot s;
  s.taken_at = "2026-11-29T00:00:00Z";
  auto back = snapshot_from_text(snapshot_to_text(s));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, s);
}

TEST(SnapshotJson, FilledRoundTrips) {
  Snapshot s;
  sys::MemInfo m;
  m.mem_total_bytes = 127600748ull * 1024;
  m.mem_available_bytes = 118566368ull * 1024;
  s.meminfo = m;
  s.env["WORLD_SIZE"] = "2";
  gpu::NvmlReadings nvml;
  gpu::Device d;
  d.name = std::string("NVIDIA GB10");
  d.memory = Reading<gpu::MemoryInfo>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  d.compute_capability = gpu::ComputeCapability{12, 1};
  nvml.devices.push_back(d);
  s.gpu.nvml = nvml;
  s.python = std::vector<pyenv::PythonEnv>{};
  auto back = snapshot_from_text(snapshot_to_text(s));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, s);
}

TEST(SnapshotJson, RejectsGarbage) {
  EXPECT_FALSE(snapshot_from_text("not json"));
  EXPECT_FALSE(snapshot_from_text("[]"));
  EXPECT_FALSE(snapshot_from_text(R"({"schema_version": 99})"));
  EXPECT_FALSE(snapshot_from_text(R"({"schema_version": 1, "host": 5})"));
}

}  // namespace
}  // namespace sparkdoc
