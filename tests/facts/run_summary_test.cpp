// The run summary's numbers: peaks, time power-capped or slowed, events and notes, from the
// small fixture run and from literal log text.
#include "facts/run_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runlog/reader.h"

namespace sparkdoc::facts {
namespace {

using runlog::RunLog;
using ::testing::HasSubstr;

std::string small_dir() {
  return std::string(SPARKDOC_FIXTURES) + "/runlog/small";
}

RunSummary small() {
  auto log = runlog::read_log(small_dir());
  EXPECT_TRUE(log);
  return summarize_run(*log);
}

TEST(Summary, PeaksOfTheSmallLog) {
  RunSummary s = small();
  EXPECT_EQ(s.host, "spark-01");
  EXPECT_EQ(s.samples, 6u);
  EXPECT_DOUBLE_EQ(s.origin_ts, 1795947300.5);
  EXPECT_DOUBLE_EQ(*s.duration_s, 7.1);
  // GB10 reports no device figure: the processes' sum, python 61 GB + vllm 6 GB.
  EXPECT_EQ(s.gpu_mem_source, "processes");
  EXPECT_EQ(*s.peak_gpu_mem_bytes, 67000000000u);
  EXPECT_DOUBLE_EQ(*s.peak_gpu_mem_at_s, 3.5);
  ASSERT_EQ(s.process_peaks.size(), 2u);
  EXPECT_EQ(s.process_peaks[0].name, "python");
  EXPECT_EQ(s.process_peaks[0].peak_bytes, 61500000000u);
  EXPECT_EQ(*s.peak_host_used_bytes, 130663165952u - 52000000000u);
  EXPECT_EQ(*s.min_available_bytes, 52000000000u);
  EXPECT_EQ(*s.peak_page_cache_bytes, 30000000000u);
  EXPECT_DOUBLE_EQ(*s.max_psi_some_avg10, 8.0);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].name, "NVIDIA GB10");
  EXPECT_DOUBLE_EQ(*s.gpus[0].max_power_w, 100.4);
  EXPECT_DOUBLE_EQ(*s.gpus[0].first_temp_c, 44);
  EXPECT_DOUBLE_EQ(*s.gpus[0].max_temp_c, 69);
  EXPECT_DOUBLE_EQ(*s.gpus[0].min_sm_clock_mhz, 1905);
  // Counter deltas: 0.6 s + 1.0 s + 0.9 s power, 0.1 s thermal, though the reasons read 0x0.
  EXPECT_EQ(s.gpus[0].throttle_source, "clock-event counters");
  EXPECT_NEAR(*s.power_capped_s, 2.5, 1e-9);
  EXPECT_NEAR(*s.slowed_s, 0.1, 1e-9);
  EXPECT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.warn_events, 3u);
  EXPECT_EQ(s.events_by_kind.at("new_gpu_process"), 2u);
  EXPECT_EQ(s.cache_drops, 2u);
  ASSERT_TRUE(s.end);
  EXPECT_EQ(s.end->exit_status, 0);
  // The cut line and the damaged line are both said.
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_THAT(s.notes[0], HasSubstr("unfinished line"));
}

// The page-cache peak is Cached + Buffers - Shmem (facts::page_cache_bytes); a log written
// before Buffers and Shmem were recorded counts them as 0, and gives the peak it gave.
TEST(Summary, PageCachePeakIsCachedPlusBuffersMinusShmem) {
  RunLog log = runlog::parse_log(
      R"({"type":"sample","ts":0,"mem":{"cached_bytes":10000000000,"buffers_bytes":500000000,)"
      R"("shmem_bytes":4000000000}})"
      "\n"
      R"({"type":"sample","ts":1,"mem":{"cached_bytes":9000000000}})"
      "\n");
  EXPECT_EQ(summarize_run(log).peak_page_cache_bytes, 9000000000u);
}

TEST(Summary, ReasonBitsWhenThereAreNoCounters) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"index\":0,\"clock_event_reasons\":4}]}\n"
      "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{\"index\":0,\"clock_event_reasons\":64}]}\n"
      "{\"type\":\"sample\",\"ts\":5,\"gpus\":[{\"index\":0,\"clock_event_reasons\":0}]}\n");
  RunSummary s = summarize_run(log);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].throttle_source, "clock-event reasons");
  EXPECT_DOUBLE_EQ(*s.power_capped_s, 2);
  EXPECT_DOUBLE_EQ(*s.slowed_s, 3);
}

TEST(Summary, ACounterResetCountsNothingAndAStepIsCappedAtItsInterval) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"clock_event_counters_ns\":{\"power\":9000000000}}"
      "]}\n"
      "{\"type\":\"sample\",\"ts\":1,\"gpus\":[{\"clock_event_counters_ns\":{\"power\":5}}]}\n"
      "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{\"clock_event_counters_ns\":{\"power\":9000000005}}"
      "]}\n");
  RunSummary s = summarize_run(log);
  EXPECT_DOUBLE_EQ(*s.power_capped_s, 1);
}

// watch reads the counters every few seconds: samples between carry none, and each step runs
// from the previous sample that had them.
TEST(Summary, CountersEveryFewSamplesAreCountedOverTheirSpan) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"clock_event_counters_ns\":{\"power\":0}}]}\n"
      "{\"type\":\"sample\",\"ts\":1,\"gpus\":[{\"power_w\":99}]}\n"
      "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{\"power_w\":99}]}\n"
      "{\"type\":\"sample\",\"ts\":5,\"gpus\":[{\"clock_event_counters_ns\":{\"power\":4000000000}"
      "}]}\n"
      "{\"type\":\"sample\",\"ts\":6,\"gpus\":[{\"power_w\":99}]}\n");
  RunSummary s = summarize_run(log);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].throttle_source, "clock-event counters");
  EXPECT_DOUBLE_EQ(*s.power_capped_s, 4);
}

// Power-capped and slowed time count the counters and reason bits the detectors group as power
// capping and as slowdowns (facts/throttle.h); the other counters count for neither.
TEST(Summary, CountsEachCounterAndReasonWhereTheDetectorsGroupIt) {
  auto summary_of = [](const std::string& gpu0, const std::string& gpu1) {
    return summarize_run(runlog::parse_log("{\"type\":\"sample\",\"ts\":0,\"gpus\":[{" + gpu0 +
                                           "}]}\n" + "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{" +
                                           gpu1 + "}]}\n"));
  };
  for (std::string key :
       {"power", "board_limit", "thermal", "sw_thermal", "hw_thermal", "hw_power_brake",
        "sync_boost", "low_util", "reliability", "total_app_clocks", "total_base_clocks"}) {
    RunSummary s = summary_of("\"clock_event_counters_ns\":{\"" + key + "\":0}",
                              "\"clock_event_counters_ns\":{\"" + key + "\":1000000000}");
    const bool capped = key == "power" || key == "board_limit";
    const bool slowed =
        !capped && (key.find("thermal") != std::string::npos || key == "hw_power_brake");
    EXPECT_DOUBLE_EQ(s.power_capped_s.value_or(0), capped ? 1 : 0) << key;
    EXPECT_DOUBLE_EQ(s.slowed_s.value_or(0), slowed ? 1 : 0) << key;
  }
  // HW Power Brake (0x80) is a slowdown, as the detectors' "hardware slowdown or power brake".
  RunSummary brake = summary_of("\"clock_event_reasons\":128", "\"clock_event_reasons\":0");
  EXPECT_DOUBLE_EQ(*brake.power_capped_s, 0);
  EXPECT_DOUBLE_EQ(*brake.slowed_s, 2);
}

}  // namespace
}  // namespace sparkdoc::facts
