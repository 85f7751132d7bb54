// The detectors' rules one at a time, on small synthetic streams: where each threshold lies,
// that an episode fires once, and that missing readings never raise an event.
#include "watch/detectors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "facts/throttle.h"
#include "model/gpu.h"

namespace sparkdoc::watch {
namespace {

using runlog::ClockCounters;
using runlog::EventSeverity;
using runlog::GpuProcessUse;
using runlog::GpuSample;
using runlog::Sample;

using ::testing::HasSubstr;

constexpr uint64_t kGB = 1000ull * 1000 * 1000;

GpuSample busy_gpu(double power_w, unsigned temp_c, unsigned sm_mhz = 1980, unsigned util = 99) {
  GpuSample g;
  g.power_w = power_w;
  g.temp_c = temp_c;
  g.sm_clock_mhz = sm_mhz;
  g.util_pct = util;
  g.clock_event_reasons = 0;
  return g;
}

Sample at(double ts, GpuSample g) {
  Sample s;
  s.ts = ts;
  s.gpus.push_back(std::move(g));
  return s;
}

std::vector<std::string> kinds(const std::vector<runlog::Event>& events) {
  std::vector<std::string> out;
  for (const runlog::Event& e : events) out.push_back(e.kind);
  return out;
}

DetectorConfig discrete(double limit_w) {
  DetectorConfig c;
  c.power_limit_w[0] = limit_w;
  return c;
}

// 80 s at 5 s steps, flat power, temperature climbing one degree a step.
std::vector<Sample> plateau_run(double power_w, bool with_util = true) {
  std::vector<Sample> samples;
  for (int i = 0; i <= 16; ++i) {
    GpuSample g = busy_gpu(power_w + (i % 2), 50 + static_cast<unsigned>(i));
    if (!with_util) g.util_pct.reset();
    samples.push_back(at(5.0 * i, g));
  }
  return samples;
}

TEST(PowerCapPlateau, FiresOnceTheWindowIsFullAtTheEnforcedLimit) {
  auto events = detect(discrete(700), plateau_run(690));
  ASSERT_EQ(kinds(events), std::vector<std::string>{"power_cap_plateau"});
  EXPECT_EQ(events[0].sample, 12u) << "60 s of 5 s steps";
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn);
  EXPECT_THAT(events[0].message, HasSubstr("700 W enforced limit"));
}

TEST(PowerCapPlateau, SteadyLoadWellBelowTheLimitIsNotAPlateau) {
  EXPECT_TRUE(detect(discrete(700), plateau_run(300)).empty());
}

TEST(PowerCapPlateau, WithoutALimitOrUtilisationNothingIsGuessed) {
  EXPECT_TRUE(detect(DetectorConfig{}, plateau_run(98, /*with_util=*/false)).empty());
}

TEST(PowerCapPlateau, SparkWordingNamesTheSustainedCap) {
  DetectorConfig spark;
  spark.dgx_spark = true;
  auto events = detect(spark, plateau_run(98));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_THAT(events[0].message, HasSubstr("about 100 W"));
}

TEST(PowerCapPlateau, FallingTemperatureIsNotAClimb) {
  auto samples = plateau_run(690);
  for (size_t i = 0; i < samples.size(); ++i)
    samples[i].gpus[0].temp_c = 80 - static_cast<unsigned>(i);
  EXPECT_TRUE(detect(discrete(700), samples).empty());
}

TEST(ClockSlowdown, CounterDeltaFiresWhileTheReasonBitsReadNone) {
  std::vector<Sample> samples;
  for (int i = 0; i < 4; ++i) {
    GpuSample g = busy_gpu(98, 60);
    g.counters.power = 1'000'000'000ull + (i >= 2 ? 900'000'000ull * (i - 1) : 0);
    samples.push_back(at(1.0 * i, g));
  }
  auto events = detect(DetectorConfig{}, samples);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"clock_slowdown"});
  EXPECT_EQ(events[0].sample, 2u);
  EXPECT_EQ(events[0].severity, EventSeverity::kInfo);
  EXPECT_THAT(events[0].message, HasSubstr("90%"));
  EXPECT_THAT(events[0].message, HasSubstr("reason bits read none"));
}

// The sampler reads the counters every 5 s at a 1 s interval: the step is measured over the
// 5 s between two readings, and the samples between keep that verdict without a second event.
TEST(ClockSlowdown, CountersEveryFewSamplesAreMeasuredOverTheirOwnSpan) {
  std::vector<Sample> samples;
  for (int i = 0; i <= 15; ++i) {
    GpuSample g = busy_gpu(98, 60);
    if (i % 5 == 0) g.counters.power = i >= 10 ? 4'500'000'000ull : 0;  // 90% of 5 s, at 10
    samples.push_back(at(1.0 * i, g));
  }
  auto events = detect(DetectorConfig{}, samples);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"clock_slowdown"});
  EXPECT_EQ(events[0].sample, 10u);
  EXPECT_THAT(events[0].message, HasSubstr("90% of the last 5.0 s"));
}

// Each counter raises the slowdown group that the run summary counts it under
// (facts/throttle.h): power capping for kPowerCap, a slowdown group for kSlowdown.
TEST(ClockSlowdown, EachCounterFiresTheGroupTheSummaryCountsItUnder) {
  using Field = std::optional<uint64_t> ClockCounters::*;
  const std::vector<std::pair<std::string, Field>> counters = {
      {"power", &ClockCounters::power},           {"board_limit", &ClockCounters::board_limit},
      {"thermal", &ClockCounters::thermal},       {"sw_thermal", &ClockCounters::sw_thermal},
      {"hw_thermal", &ClockCounters::hw_thermal}, {"hw_power_brake", &ClockCounters::hw_power_brake},
      {"reliability", &ClockCounters::reliability}};
  for (const auto& [key, field] : counters) {
    std::vector<Sample> samples;
    for (int i = 0; i < 3; ++i) {
      GpuSample g = busy_gpu(98, 60);
      g.counters.*field = 900'000'000ull * static_cast<uint64_t>(i);
      samples.push_back(at(1.0 * i, g));
    }
    auto events = detect(DetectorConfig{}, samples);
    ASSERT_EQ(events.size(), 1u) << key;
    const bool power_cap = events[0].message.find("power capping") != std::string::npos;
    const bool reliability = events[0].message.find("reliability") != std::string::npos;
    switch (facts::counter_throttle(key)) {
      case facts::Throttle::kPowerCap:
        EXPECT_TRUE(power_cap) << key << ": " << events[0].message;
        break;
      case facts::Throttle::kSlowdown:
        EXPECT_FALSE(power_cap || reliability) << key << ": " << events[0].message;
        break;
      case facts::Throttle::kNone:
        EXPECT_TRUE(reliability) << key << ": " << events[0].message;
        break;
    }
  }
}

TEST(ClockSlowdown, ReasonBitFiresAndOneEpisodeFiresOnce) {
  std::vector<Sample> samples;
  for (int i = 0; i < 10; ++i) {
    GpuSample g = busy_gpu(98, 60);
    // Active at 1-3, absent 4-5 (shorter than clear_after_s), active again 6.
    if ((i >= 1 && i <= 3) || i == 6) g.clock_event_reasons = 0x40;  // HW Thermal Slowdown
    samples.push_back(at(1.0 * i, g));
  }
  auto events = detect(DetectorConfig{}, samples);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"clock_slowdown"});
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn);
  EXPECT_THAT(events[0].message, HasSubstr("HW Thermal Slowdown"));
}

TEST(ClockSlowdown, ANewEpisodeAfterTheClearTimeFiresAgain) {
  DetectorConfig c;
  c.clear_after_s = 3;
  std::vector<Sample> samples;
  for (int i = 0; i < 10; ++i) {
    GpuSample g = busy_gpu(98, 60);
    if (i == 1 || i == 8) g.clock_event_reasons = 0x20;
    samples.push_back(at(1.0 * i, g));
  }
  auto events = detect(c, samples);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].sample, 8u);
}

TEST(ClockSlowdown, ACounterThatWentBackwardsIsNoEvidence) {
  std::vector<Sample> samples;
  for (uint64_t value : {50'000'000'000ull, 10ull, 20ull}) {
    GpuSample g = busy_gpu(98, 60);
    g.counters.sw_thermal = value;
    samples.push_back(at(static_cast<double>(samples.size()), g));
  }
  EXPECT_TRUE(detect(DetectorConfig{}, samples).empty());
}

TEST(SmClockDrop, BusyClockBelowThreeQuartersOfItsPeakFires) {
  std::vector<Sample> samples = {at(0, busy_gpu(600, 60, 1980)), at(1, busy_gpu(600, 60, 1900)),
                                 at(2, busy_gpu(600, 60, 1400)), at(3, busy_gpu(600, 60, 1300))};
  auto events = detect(DetectorConfig{}, samples);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"sm_clock_drop"});
  EXPECT_EQ(events[0].sample, 2u);
  EXPECT_THAT(events[0].message, HasSubstr("down from 1980 MHz"));
}

TEST(SmClockDrop, AnIdleGpuMayClockDown) {
  std::vector<Sample> samples = {at(0, busy_gpu(600, 60, 1980)),
                                 at(1, busy_gpu(80, 40, 345, /*util=*/0))};
  EXPECT_TRUE(detect(DetectorConfig{}, samples).empty());
}

TEST(SmClockDrop, SparkStartingInTheDegradedPowerStateIsFlagged) {
  DetectorConfig spark;
  spark.dgx_spark = true;
  auto events = detect(spark, {at(0, busy_gpu(35, 60, 850, 97))});
  ASSERT_EQ(kinds(events), std::vector<std::string>{"sm_clock_drop"});
  EXPECT_THAT(events[0].message, HasSubstr("power-cycle"));
}

// eugr/spark-vllm-docker#334 (2026-08-06): 97 % busy at 650 MHz and 13 W, every reason
// "Not Active". One sample a second: healthy for 5 s, then wedged; the event comes at the
// sample where the condition has held for 10 s.
std::vector<std::string> power_wedge_kinds(const std::vector<runlog::Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (e.kind == "power_wedge") out.push_back(e.kind);
  }
  return out;
}

TEST(PowerWedge, FiresAfterTenSecondsStuckLowWithNoReason) {
  DetectorConfig spark;
  spark.dgx_spark = true;
  std::vector<Sample> samples;
  for (int i = 0; i < 5; ++i) samples.push_back(at(i, busy_gpu(92, 58, 2420, 98)));
  for (int i = 5; i < 30; ++i) samples.push_back(at(i, busy_gpu(13, 47, 650, 97)));
  auto events = detect(spark, samples);
  std::vector<runlog::Event> wedge;
  for (const auto& e : events) {
    if (e.kind == "power_wedge") wedge.push_back(e);
  }
  ASSERT_EQ(wedge.size(), 1u);
  EXPECT_EQ(wedge[0].sample, 15u);
  EXPECT_EQ(wedge[0].severity, runlog::EventSeverity::kWarn);
  EXPECT_THAT(wedge[0].message, HasSubstr("650 MHz at 97% utilisation and 13.0 W for 10 s"));
  EXPECT_THAT(wedge[0].message, HasSubstr("unplug"));
}

TEST(PowerWedge, SteadyLoadForTenMinutesStaysQuiet) {
  DetectorConfig spark;
  spark.dgx_spark = true;
  std::vector<Sample> samples;
  for (int i = 0; i < 600; ++i) {
    samples.push_back(at(i, busy_gpu(88 + (i % 5), 60, 2385 + static_cast<unsigned>(i % 70), 98)));
  }
  EXPECT_TRUE(detect(spark, samples).empty());
}

// Memory-bound decode holds > 1000 MHz at 15-20 W (joeynyc/spark-doctor): low power alone is no
// wedge; nor is a low clock that a reason bit explains, nor a discrete GPU.
TEST(PowerWedge, DecodeAReasonBitOrAnotherGpuIsNoWedge) {
  DetectorConfig spark;
  spark.dgx_spark = true;
  std::vector<Sample> decode;
  std::vector<Sample> capped;
  for (int i = 0; i < 30; ++i) {
    decode.push_back(at(i, busy_gpu(18, 55, 1100, 96)));
    GpuSample g = busy_gpu(13, 47, 650, 97);
    g.clock_event_reasons = gpu::kReasonSwPowerCap;
    capped.push_back(at(i, g));
  }
  EXPECT_TRUE(power_wedge_kinds(detect(spark, decode)).empty());
  EXPECT_TRUE(power_wedge_kinds(detect(spark, capped)).empty());
  std::vector<Sample> discrete;
  for (int i = 0; i < 30; ++i) discrete.push_back(at(i, busy_gpu(13, 47, 650, 97)));
  EXPECT_TRUE(power_wedge_kinds(detect(DetectorConfig{}, discrete)).empty());
}

Sample with_processes(double ts, std::vector<GpuProcessUse> processes) {
  GpuSample g;
  g.processes = std::move(processes);
  return at(ts, g);
}

TEST(GpuProcesses, FirstListIsTheBaselineThenArrivalsAndExitsAreEvents) {
  GpuProcessUse trainer{40211, "python3", 70 * kGB};
  GpuProcessUse server{48213, "vllm", 2 * kGB};
  std::vector<Sample> samples = {with_processes(0, {trainer}), with_processes(1, {trainer}),
                                 with_processes(2, {trainer, server}),
                                 with_processes(3, {trainer})};
  auto events = detect(DetectorConfig{}, samples);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"new_gpu_process", "gpu_process_exit"}));
  EXPECT_EQ(events[0].pid, 48213u);
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn) << "the trainer already holds 70 GB (G6)";
  EXPECT_THAT(events[0].message, HasSubstr("PID 40211 (python3) holds 70.0 GB"));
  EXPECT_EQ(events[1].pid, 48213u);
}

TEST(GpuProcesses, AnUnreadableListChangesNothing) {
  GpuProcessUse trainer{40211, std::nullopt, std::nullopt};
  std::vector<Sample> samples = {with_processes(0, {trainer}), at(1, GpuSample{}),
                                 with_processes(2, {trainer})};
  EXPECT_TRUE(detect(DetectorConfig{}, samples).empty());
}

Sample memory(double ts, double available_gb, double psi_some = 0, double psi_full = 0) {
  Sample s;
  s.ts = ts;
  s.mem.total_bytes = 128 * kGB;
  s.mem.available_bytes = static_cast<uint64_t>(available_gb * 1e9);
  s.mem.cached_bytes = 5 * kGB;
  s.mem.psi_some_avg10 = psi_some;
  s.mem.psi_full_avg10 = psi_full;
  return s;
}

TEST(MemoryPressure, PsiFullAloneIsPressure) {
  auto events = detect(DetectorConfig{}, {memory(0, 90), memory(1, 90, 1.0, 2.5)});
  ASSERT_EQ(kinds(events), std::vector<std::string>{"memory_pressure"});
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn);
  EXPECT_FALSE(events[0].gpu);
  EXPECT_THAT(events[0].message, HasSubstr("PSI full"));
}

TEST(MemoryPressure, WithoutMemTotalNothingIsJudged) {
  Sample s = memory(0, 1, 50, 50);
  s.mem.total_bytes.reset();
  EXPECT_TRUE(detect(DetectorConfig{}, {s}).empty());
}

TEST(PageCacheGrowth, GrowthWithoutALoadIsNotFlagged) {
  std::vector<Sample> samples;
  for (int i = 0; i < 5; ++i) {
    Sample s = memory(5.0 * i, 100);
    s.mem.cached_bytes = (5 + 3 * i) * kGB;  // reading a dataset, nothing allocating
    samples.push_back(s);
  }
  EXPECT_TRUE(detect(DetectorConfig{}, samples).empty());
}

// The page cache is Cached + Buffers - Shmem (facts::page_cache_bytes): a tmpfs or /dev/shm
// filling up grows Cached and Shmem alike and is no cache that dropping frees; Buffers are.
TEST(PageCacheGrowth, CountsCachedPlusBuffersMinusShmem) {
  auto loading = [](uint64_t cached_step, uint64_t buffers_step, uint64_t shmem_step) {
    std::vector<Sample> samples;
    for (uint64_t i = 0; i < 5; ++i) {
      Sample s = memory(5.0 * static_cast<double>(i), 100.0 - 4.0 * static_cast<double>(i));
      s.mem.cached_bytes = (5 + cached_step * i) * kGB;
      s.mem.buffers_bytes = buffers_step * i * kGB;
      s.mem.shmem_bytes = shmem_step * i * kGB;
      samples.push_back(s);
    }
    return kinds(detect(DetectorConfig{}, samples));
  };
  EXPECT_EQ(loading(3, 0, 0), std::vector<std::string>{"page_cache_growth"});
  EXPECT_EQ(loading(0, 3, 0), std::vector<std::string>{"page_cache_growth"}) << "Buffers";
  EXPECT_TRUE(loading(3, 0, 3).empty()) << "Shmem grew with Cached";
}

// The driver's kernel-log records during a run (issue 16), texts as reported (ogkm#1358, forum
// 378200): one event per kind an episode, at the sample that carried the record.
constexpr const char* kNoMemory =
    "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
    "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359";
constexpr const char* kXid119 =
    "NVRM: Xid (PCI:000f:01:00): 119, pid=2211, name=python3, Timeout after 6s of waiting for "
    "RPC response from GPU0 GSP!";

Sample with_kernel(double ts, std::vector<std::string> records) {
  Sample s = memory(ts, 90);
  s.kernel = std::move(records);
  return s;
}

TEST(DriverError, TheWedgePrecursorFiresAtItsSampleOncePerEpisode) {
  DetectorConfig spark;
  spark.unified_memory = true;
  std::vector<Sample> samples;
  for (int i = 0; i < 10; ++i) samples.push_back(with_kernel(i, {}));
  samples[4].kernel = {kNoMemory, kNoMemory, "NVRM: loading NVIDIA UNIX Open Kernel Module"};
  samples[5].kernel = {kNoMemory};
  auto events = detect(spark, samples);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"driver_error"});
  EXPECT_EQ(events[0].sample, 4u);
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn);
  EXPECT_THAT(events[0].message, HasSubstr("NV_ERR_NO_MEMORY"));
  EXPECT_THAT(events[0].message, HasSubstr("(2 records)"));
  EXPECT_THAT(events[0].message, HasSubstr("silent host wedge"));
  // After the clear time a new episode fires again.
  samples.push_back(with_kernel(60, {kNoMemory}));
  EXPECT_EQ(detect(spark, samples).size(), 2u);
}

TEST(DriverError, XidsAreJudgedByTheirNumber) {
  auto events =
      detect(DetectorConfig{}, {with_kernel(0, {}), with_kernel(1, {kXid119}),
                                with_kernel(2, {"NVRM: Xid (PCI:0000:01:00): 13, pid=7, Graphics "
                                                "Exception: ESR 0x404490=0x80000001"})});
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"driver_error", "driver_error"}));
  EXPECT_EQ(events[0].severity, EventSeverity::kWarn);
  EXPECT_THAT(events[0].message, HasSubstr("Xid 119: the GPU needs a reset"));
  EXPECT_EQ(events[1].severity, EventSeverity::kInfo);
  EXPECT_THAT(events[1].message, HasSubstr("program's own GPU fault"));
}

TEST(DriverError, OtherKernelRecordsAndNoneAreQuiet) {
  EXPECT_TRUE(
      detect(DetectorConfig{},
             {with_kernel(0, {"NVRM: loading NVIDIA UNIX Open Kernel Module"}), with_kernel(1, {})})
          .empty());
}

// The fall before the silent host wedge (field-2026 §1, vllm#56824): 28.97 to 6.27 GiB in 11 s.
constexpr double kGiB = 1024.0 * 1024 * 1024;

Sample available_at(double ts, double available_gib) {
  Sample s;
  s.ts = ts;
  s.mem.total_bytes = static_cast<uint64_t>(119 * kGiB);
  s.mem.available_bytes = static_cast<uint64_t>(available_gib * kGiB);
  return s;
}

TEST(MemoryCollapse, TheFallBeforeTheWedgeFiresOnUnifiedMemory) {
  DetectorConfig spark;
  spark.unified_memory = true;
  std::vector<Sample> samples;
  for (int i = 0; i <= 11; ++i) samples.push_back(available_at(i, 28.97 - (28.97 - 6.27) * i / 11));
  auto events = detect(spark, samples);
  std::vector<runlog::Event> collapse;
  for (const auto& e : events) {
    if (e.kind == "memory_collapse") collapse.push_back(e);
  }
  ASSERT_EQ(collapse.size(), 1u) << ::testing::PrintToString(kinds(events));
  EXPECT_EQ(collapse[0].severity, EventSeverity::kWarn);
  // 15 % of 119 GiB (19.2 GB) has gone by the ninth second, below a quarter of the pool.
  EXPECT_EQ(collapse[0].sample, 9u);
  EXPECT_THAT(collapse[0].message, HasSubstr("silent host wedge"));
  // The same fall on a discrete GPU's host is memory_pressure's, not this.
  for (const auto& e : detect(DetectorConfig{}, samples)) EXPECT_NE(e.kind, "memory_collapse");
}

TEST(MemoryCollapse, ASlowLoadOrAFallThatLeavesRoomIsQuiet) {
  DetectorConfig spark;
  spark.unified_memory = true;
  std::vector<Sample> slow, roomy;
  // 110 to 30 GiB over 80 s: 1 GiB a second never takes 15 % within 15 s.
  for (int i = 0; i <= 80; ++i) slow.push_back(available_at(i, 110 - i));
  // 110 to 60 GiB in 5 s: fast, but half the pool stays available.
  for (int i = 0; i <= 5; ++i) roomy.push_back(available_at(i, 110 - 10 * i));
  for (const auto* run : {&slow, &roomy}) {
    for (const auto& e : detect(spark, *run)) EXPECT_NE(e.kind, "memory_collapse");
  }
}

TEST(DetectorConfig, FromTheHeader) {
  runlog::LogHeader h;
  h.platform = "dgx-spark";
  h.gpus.push_back(runlog::GpuInfo{0, "NVIDIA GB10", std::nullopt, std::nullopt, std::nullopt});
  runlog::GpuInfo h200{1, "NVIDIA H200", std::nullopt, std::nullopt, 700.0};
  h.gpus.push_back(h200);
  DetectorConfig c = detector_config(h);
  EXPECT_TRUE(c.dgx_spark);
  EXPECT_TRUE(c.unified_memory);
  EXPECT_EQ(c.power_limit_w.count(0), 0u);
  EXPECT_EQ(c.power_limit_w.at(1), 700.0);
}

}  // namespace
}  // namespace sparkdoc::watch
