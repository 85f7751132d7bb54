// The watch log's records: every key written reads back (strictly), absent values stay absent, bad
// lines are errors and never exceptions, and each line is on disk as soon as write_line returns.
#include "runlog/writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/fs.h"
#include "core/strings.h"
#include "runlog/reader.h"
#include "samples.h"

namespace sparkdoc::runlog {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every field set, those GB10 cannot read too.
Sample full_sample() {
  Sample s = gb10_sample();
  s.gpus[0] = GpuSample{.index = 0,
                        .power_w = 98.7,
                        .temp_c = 71,
                        .sm_clock_mhz = 2411,
                        .mem_clock_mhz = 2619,
                        .util_pct = 97,
                        .mem_used_bytes = 12345678,
                        .clock_event_reasons = 0x24,
                        .energy_mj = 912345678,
                        .counters = ClockCounters{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                        .processes = std::vector<GpuProcessUse>{
                            {40211, "python3", 77909196800}, {2011, std::nullopt, std::nullopt}}};
  s.mem = HostMemorySample{130663165952, 37068800000, 5222400000, 122880000, 92160000,
                           10035200000,  16000000000, 230400000,  1.25,      0.0};
  return s;
}

template <class T>
T read_back(const T& record) {
  auto parsed = parse_line(to_line(record), Mode::kStrict);
  EXPECT_TRUE(parsed) << parsed.error().message;
  return std::get<T>(*parsed);
}

TEST(LogRecords, SampleRoundTrips) {
  Sample s = full_sample();
  EXPECT_EQ(read_back(s), s);
}

TEST(LogRecords, SampleKeysFollowTheContract) {
  std::string line = to_line(full_sample());
  EXPECT_THAT(line, ::testing::StartsWith(
                        R"({"type":"sample","t":"2026-11-30T00:53:20.125Z","ts":1796000000.125,)"));
  for (const char* key :
       {"\"power_w\":98.7", "\"temp_c\":71", "\"sm_clock_mhz\":2411", "\"mem_clock_mhz\":2619",
        "\"util_pct\":97", "\"mem_used_bytes\":12345678", "\"clock_event_reasons\":36",
        "\"energy_mj\":912345678",
        "\"clock_event_counters_ns\":{\"power\":1,\"thermal\":2,\"sync_boost\":3,"
        "\"board_limit\":4,\"low_util\":5,\"reliability\":6,\"total_app_clocks\":7,"
        "\"total_base_clocks\":8,",
        "\"processes\":[{\"pid\":40211,\"name\":\"python3\",\"used_bytes\":77909196800},"
        "{\"pid\":2011}]",
        "\"mem\":{\"total_bytes\":130663165952,\"available_bytes\":37068800000,"
        "\"cached_bytes\":5222400000,",
        "\"anon_bytes\":10035200000", "\"swap_used_bytes\":230400000", "\"psi_some_avg10\":1.25",
        "\"psi_full_avg10\":0.0"}) {
    EXPECT_THAT(line, HasSubstr(key));
  }
}

TEST(LogRecords, ValuesNotReadAreLeftOutNotZeroed) {
  Sample s;
  s.ts = 1;
  GpuSample g;
  g.temp_c = 45;
  s.gpus.push_back(g);
  std::string line = to_line(s);
  EXPECT_THAT(line, Not(HasSubstr("power_w")));
  EXPECT_THAT(line, Not(HasSubstr("processes")));
  EXPECT_THAT(line, HasSubstr("\"mem\":{}"));
  EXPECT_EQ(read_back(s), s);
}

TEST(LogRecords, HeaderRoundTrips) {
  LogHeader h;
  h.sparkdoc_version = "0.1.0";
  h.started_ts = 1796000000.5;
  h.interval_s = 1;
  h.host = "spark-01";
  h.platform = "dgx-spark";
  h.platform_description = "DGX Spark";
  h.unified_memory = true;
  h.driver_version = "580.95.05";
  h.gpus.push_back(GpuInfo{0, "NVIDIA GB10", "GPU-1", "0000000F:01:00.0", std::nullopt});
  h.unavailable.push_back(Unavailable{0, "mem_used_bytes", "not supported"});
  h.unavailable.push_back(Unavailable{std::nullopt, "mem.psi_full_avg10", "no full line"});
  std::string line = to_line(h);
  EXPECT_THAT(line, ::testing::StartsWith(R"({"type":"header","sparkdoc_version":"0.1.0",)"
                                          R"("started":"2026-11-30T00:53:20.500Z",)"));
  EXPECT_THAT(line, HasSubstr(R"("interval_s":1.0)"));
  EXPECT_THAT(line, HasSubstr(R"("gpus":[{"index":0,"name":"NVIDIA GB10","uuid":"GPU-1",)"));
  EXPECT_EQ(read_back(h), h);
}

TEST(LogRecords, EventRoundTripsAndHostEventsNameNoGpu) {
  Event e{1796000000.25, "memory_pressure", EventSeverity::kWarn, std::nullopt, "low", 21,
          std::nullopt};
  std::string line = to_line(e);
  EXPECT_EQ(line, R"({"type":"event","t":"2026-11-30T00:53:20.250Z","ts":1796000000.25,)"
                  R"("kind":"memory_pressure","severity":"warn","message":"low","sample":21})");
  EXPECT_EQ(read_back(e), e);
  Event p{2, "new_gpu_process", EventSeverity::kInfo, 1, "x", 3, 4242};
  EXPECT_EQ(read_back(p), p);
}

TEST(LogRecords, BadLinesAreErrors) {
  for (const char* line :
       {"", "not json", "[1,2]", "{}", R"({"type":"end"})", R"({"type":"sample","ts":"soon"})",
        R"({"type":"sample"})", R"({"type":"sample","ts":1,"gpus":[{"index":-1}]})",
        R"({"type":"sample","ts":1,"gpus":[{"index":0,"temp_c":1e99}]})",
        R"({"type":"sample","ts":1,"gpus":{"index":0}})", R"({"type":"sample","ts":1,"mem":[]})",
        R"({"type":"event","ts":1,"kind":"x","severity":"warn"})"}) {
    EXPECT_FALSE(parse_line(line, Mode::kStrict)) << line;
  }
}

TEST(LogRecords, UnknownKeysAndNullsAreTolerated) {
  auto parsed = parse_line(
      R"({"type":"sample","ts":5,"future":{"a":1},"gpus":[{"index":0,"power_w":null,"new":1}]})",
      Mode::kStrict);
  ASSERT_TRUE(parsed) << parsed.error().message;
  const Sample& s = std::get<Sample>(*parsed);
  EXPECT_FALSE(s.gpus.at(0).power_w);
}

TEST(LineFile, EachLineIsInTheFileWhenWriteReturns) {
  std::string path = std::string(SPARKDOC_BINARY_DIR) + "/watch_line_file_test.jsonl";
  std::remove(path.c_str());
  auto file = LineFile::create(path);
  ASSERT_TRUE(file) << file.error().message;
  std::string expected;
  for (int i = 0; i < 3; ++i) {
    std::string line = to_line(full_sample());
    ASSERT_TRUE(file->write_line(line));
    expected += line + "\n";
    // Read through another descriptor: nothing is held in a user-space buffer.
    EXPECT_EQ(read_text(path).value(), expected);
  }
  std::string text = read_text(path).value();
  for (auto line : lines(text)) {
    EXPECT_TRUE(parse_line(line, Mode::kStrict)) << line;
  }
  std::remove(path.c_str());
}

TEST(LineFile, CreateNamesTheFileItCannotCreate) {
  auto file = LineFile::create("/nonexistent-dir/run.jsonl");
  ASSERT_FALSE(file);
  EXPECT_THAT(file.error().message, HasSubstr("/nonexistent-dir/run.jsonl"));
}

}  // namespace
}  // namespace sparkdoc::runlog
