// The acceptance test of the detectors: recorded GB10 traces (tests/fixtures/watch/generate.py
// tells each story from the documents' numbers) make every detector fire once, at the sample
// the story says, through the same path as a live watch: the fake NVML replays the trace one
// step per sample, the sampler reads it, the detectors judge it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/nvml_api.h"
#include "runlog/reader.h"
#include "runlog/writer.h"
#include "watch/detectors.h"
#include "watch/sampler.h"

namespace sparkdoc::watch {
namespace {

using runlog::Event;
using runlog::LogHeader;
using runlog::Sample;

using Fired = std::tuple<size_t, std::string, std::string>;  // sample, kind, severity

constexpr double kStart = 1796000000;
constexpr double kStepS = 5;

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/" + name;
}

std::vector<Fired> expected(const std::string& trace) {
  std::ifstream in(fixture("watch/expected-events.json"));
  auto all = nlohmann::json::parse(in);
  std::vector<Fired> out;
  for (const auto& row : all.at(trace)) {
    out.emplace_back(row[0].get<size_t>(), row[1].get<std::string>(), row[2].get<std::string>());
  }
  return out;
}

std::vector<Fired> fired(const std::vector<Event>& events) {
  std::vector<Fired> out;
  for (const Event& e : events) {
    out.emplace_back(e.sample, e.kind, std::string(runlog::severity_name(e.severity)));
  }
  return out;
}

// The throttling trace sampled through the fake NVML, sample i stamped at 5 s * i.
struct Replay {
  LogHeader header;
  std::vector<Sample> samples;
};

// Every quantity at every step, unless `options` says otherwise.
Replay replay_throttle_trace(size_t steps, SamplerOptions options = {0, 0},
                             double step_s = kStepS) {
  setenv("SPARKDOC_FAKE_GPU_FIXTURE", fixture("gpu/gb10-throttle-trace.json").c_str(), 1);
  static const Result<gpu::Nvml> nvml = gpu::Nvml::load(SPARKDOC_FAKE_NVML);
  Replay r;
  {
    Sampler sampler = Sampler::open(nvml, Root(fixture("procfs/gb10-watch")), options);
    for (size_t i = 0; i < steps; ++i) {
      r.samples.push_back(sampler.sample(kStart + step_s * static_cast<double>(i)));
    }
    r.header = sampler.header();
  }
  unsetenv("SPARKDOC_FAKE_GPU_FIXTURE");
  return r;
}

TEST(Trace, FakeNvmlReplayFiresEachDetectorAtItsSample) {
  Replay r = replay_throttle_trace(40);
  EXPECT_EQ(r.header.platform, "dgx-spark");
  ASSERT_EQ(r.header.gpus.size(), 1u);
  EXPECT_EQ(r.header.gpus[0].name, "NVIDIA GB10");
  EXPECT_FALSE(r.header.gpus[0].power_limit_w) << "GB10 has no readable power limit";
  std::vector<Event> events = detect(detector_config(r.header), r.samples);
  EXPECT_EQ(fired(events), expected("gb10-throttle-trace"));
  for (const Event& e : events) {
    EXPECT_EQ(e.gpu, 0u) << e.message;
    EXPECT_GT(e.message.size(), 40u) << e.kind;
  }
}

TEST(Trace, SamplerReadsEachStepOfTheTrace) {
  Replay r = replay_throttle_trace(27);
  const runlog::GpuSample& capped = r.samples[16].gpus.at(0);
  EXPECT_DOUBLE_EQ(capped.power_w.value(), 99.4);
  EXPECT_EQ(capped.temp_c, 70u);
  EXPECT_EQ(capped.clock_event_reasons, 0u);
  EXPECT_EQ(capped.counters.power.value() - r.samples[15].gpus[0].counters.power.value(),
            4'500'000'000u);
  EXPECT_FALSE(capped.mem_used_bytes) << "GB10 answers NOT_SUPPORTED for framebuffer memory";
  ASSERT_TRUE(capped.processes);
  ASSERT_EQ(capped.processes->size(), 3u);
  EXPECT_EQ(capped.processes->at(0).pid, 40211u);
  EXPECT_EQ(capped.processes->at(0).name, "python3");
  EXPECT_EQ(capped.processes->at(1).name, "Xorg");
  EXPECT_EQ(r.samples[26].gpus[0].sm_clock_mhz, 850u);
  // Energy counts up by the previous step's power over 5 s (11.47 W -> 57.35 J).
  EXPECT_EQ(r.samples[2].gpus[0].energy_mj.value() - r.samples[1].gpus[0].energy_mj.value(),
            57350u);
  EXPECT_EQ(r.samples[0].mem.total_bytes, 127600748ull * 1024);
  // The first sample's gaps are in the header, with NVML's reason.
  bool mem_used_listed = false;
  for (const runlog::Unavailable& u : r.header.unavailable) {
    if (u.field == "mem_used_bytes") {
      mem_used_listed = true;
      EXPECT_THAT(u.reason, ::testing::HasSubstr("NVML_ERROR_NOT_SUPPORTED"));
    }
  }
  EXPECT_TRUE(mem_used_listed);
}

// At watch's defaults the counters are read every 5 s (every step of this 5 s trace) and the
// energy every 30 s; the first sample reads everything and lists no gap for what a later one
// skipped, and the detectors fire as when everything is read.
TEST(Trace, DefaultCadenceReadsTheCostlyCountersLessOften) {
  Replay r = replay_throttle_trace(40, SamplerOptions{});
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const runlog::GpuSample& g = r.samples[i].gpus.at(0);
    EXPECT_FALSE(g.counters.empty()) << "sample " << i;
    EXPECT_EQ(g.energy_mj.has_value(), i % 6 == 0) << "sample " << i;
  }
  for (const runlog::Unavailable& u : r.header.unavailable) EXPECT_NE(u.field, "energy_mj");
  EXPECT_EQ(fired(detect(detector_config(r.header), r.samples)), expected("gb10-throttle-trace"));

  // Samples 1 s apart: the counters at every fifth.
  Replay fast = replay_throttle_trace(12, SamplerOptions{}, 1.0);
  for (size_t i = 0; i < fast.samples.size(); ++i) {
    EXPECT_EQ(fast.samples[i].gpus.at(0).counters.empty(), i % 5 != 0) << "sample " << i;
  }
}

// What a log records, judged again, gives the events the live run gave.
TEST(Trace, ReplayedLogGivesTheEventsOfTheLiveRun) {
  Replay r = replay_throttle_trace(40);
  std::stringstream log;
  log << runlog::to_line(r.header) << "\n";
  for (const Sample& s : r.samples) log << runlog::to_line(s) << "\n";
  std::vector<Sample> read_back;
  std::optional<LogHeader> header;
  for (std::string line; std::getline(log, line);) {
    auto record = runlog::parse_line(line, runlog::Mode::kStrict);
    ASSERT_TRUE(record) << record.error().message << "\n" << line;
    if (auto* h = std::get_if<LogHeader>(&*record)) header = *h;
    if (auto* s = std::get_if<Sample>(&*record)) read_back.push_back(*s);
  }
  ASSERT_TRUE(header);
  EXPECT_EQ(read_back, r.samples);
  EXPECT_EQ(fired(detect(detector_config(*header), read_back)), expected("gb10-throttle-trace"));
}

TEST(Trace, RecordedMemoryLogFiresAtItsSamples) {
  std::ifstream in(fixture("watch/gb10-load-memory.jsonl"));
  ASSERT_TRUE(in);
  std::optional<LogHeader> header;
  std::vector<Sample> samples;
  for (std::string line; std::getline(in, line);) {
    auto record = runlog::parse_line(line, runlog::Mode::kStrict);
    ASSERT_TRUE(record) << record.error().message;
    if (auto* h = std::get_if<LogHeader>(&*record)) header = *h;
    if (auto* s = std::get_if<Sample>(&*record)) samples.push_back(*s);
  }
  ASSERT_TRUE(header);
  EXPECT_TRUE(header->unified_memory);
  std::vector<Event> events = detect(detector_config(*header), samples);
  EXPECT_EQ(fired(events), expected("gb10-load-memory"));
  for (const Event& e : events) {
    if (e.kind != runlog::kNewGpuProcess) {
      EXPECT_FALSE(e.gpu) << "host events name no GPU";
    }
  }
}

}  // namespace
}  // namespace sparkdoc::watch
