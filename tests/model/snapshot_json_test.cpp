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

// Issue 21 item 6: a number the field cannot hold is refused, naming the member, instead of
// wrapping (-1 bytes read as 2^64-1, 2^32+1 read as version 1) or casting out of range (1e308).
TEST(SnapshotJson, RefusesNumbersTheFieldCannotHold) {
  auto with_meminfo = [](const std::string& member) {
    return std::string(R"({"schema_version": 2, "meminfo": {)") + member + "}}";
  };
  auto error_of = [](const std::string& text) {
    auto s = snapshot_from_text(text);
    return s ? std::string("accepted") : s.error().message;
  };
  EXPECT_EQ(error_of(with_meminfo(R"("swap_free_bytes": -1)")),
            "snapshot does not match the schema: meminfo.swap_free_bytes: -1 is out of range for "
            "an unsigned 64-bit field");
  EXPECT_EQ(error_of(with_meminfo(R"("mem_available_bytes": 1e308)")),
            "snapshot does not match the schema: meminfo.mem_available_bytes: 1e+308 is out of "
            "range for an unsigned 64-bit field");
  EXPECT_EQ(error_of(with_meminfo(R"("mem_free_bytes": 1.5)")),
            "snapshot does not match the schema: meminfo.mem_free_bytes: 1.5 is out of range for "
            "an unsigned 64-bit field");
  EXPECT_EQ(error_of(R"({"schema_version": 4294967297})"),
            "snapshot schema_version 4294967297 is not supported (this sparkdoc reads 1..2)");
  EXPECT_EQ(error_of(R"({"schema_version": -4294967295})"),
            "snapshot schema_version -4294967295 is not supported (this sparkdoc reads 1..2)");
  // A value of the wrong type names its field too (issue 18), nested members included.
  EXPECT_EQ(error_of(with_meminfo(R"("mem_total_bytes": "lots")")),
            "snapshot does not match the schema: meminfo.mem_total_bytes: type must be number, "
            "but is string");
  EXPECT_EQ(error_of(R"({"schema_version": 2, "host": {"hostname": 5}})"),
            "snapshot does not match the schema: host.hostname: type must be string, but is "
            "number");
  // Inside a Reading and an optional, and in a signed field narrower than JSON's integers.
  EXPECT_NE(error_of(R"({"schema_version": 2, "gpu": {"nvml": {"devices": [)"
                     R"({"compute_capability": {"major": 4294967308, "minor": 1}}]}}})"),
            "accepted");
  // Whole numbers written as floats, and the largest values, still read.
  auto exact = snapshot_from_text(
      with_meminfo(R"("mem_total_bytes": 1.3e11, "swap_free_bytes": 18446744073709551615)"));
  ASSERT_TRUE(exact) << exact.error().message;
  EXPECT_EQ(exact->meminfo->mem_total_bytes, 130000000000ull);
  EXPECT_EQ(exact->meminfo->swap_free_bytes, 18446744073709551615ull);
}

}  // namespace
}  // namespace sparkdoc
