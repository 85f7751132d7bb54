// The renderings of a sample: the skill's CSV, the Prometheus exposition, the terminal view.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <regex>
#include <set>
#include <string>

#include "../runlog/samples.h"
#include "core/strings.h"
#include "report/exposition.h"
#include "report/watch_csv.h"
#include "report/watch_view.h"

namespace sparkdoc::report {
namespace {

using runlog::EventSeverity;
using runlog::gb10_header;
using runlog::gb10_sample;
using runlog::Sample;

using ::testing::HasSubstr;
using ::testing::Not;

// The CSV and the view print local time, as nvidia-smi does; the tests pin it to UTC.
class LocalTimeIsUtc : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
const auto* const kUtc = ::testing::AddGlobalTestEnvironment(new LocalTimeIsUtc);

TEST(Csv, MatchesNvidiaSmiQueryFormat) {
  EXPECT_EQ(kCsvHeader, "timestamp, temperature.gpu, power.draw [W]");
  EXPECT_EQ(csv_lines(gb10_sample()),
            std::vector<std::string>{"2026/11/30 00:53:20.125, 45, 11.17 W"});
}

TEST(Csv, ValuesNotReadAreNA) {
  Sample s;
  s.ts = 1796000000;
  s.gpus.push_back(runlog::GpuSample{});
  s.gpus.push_back(runlog::GpuSample{});
  s.gpus[1].index = 1;
  s.gpus[1].power_w = 700;
  EXPECT_EQ(csv_lines(s), (std::vector<std::string>{"2026/11/30 00:53:20.000, [N/A], [N/A]",
                                                    "2026/11/30 00:53:20.000, [N/A], 700.00 W"}));
}

// Every line is a comment or `name{labels} value`, and each family's HELP and TYPE come once,
// before its series.
void expect_valid_exposition(const std::string& text) {
  std::regex series(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*))"
                    R"((\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.e+]+$)");
  std::regex comment(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  std::set<std::string> typed;
  std::set<std::string> seen;
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  for (auto view : lines(text)) {
    std::string line(view);
    if (line.empty()) continue;
    std::smatch m;
    if (std::regex_match(line, m, comment)) {
      if (m[1] == "TYPE") {
        EXPECT_TRUE(typed.insert(m[2]).second) << "second TYPE for " << m[2];
        EXPECT_FALSE(seen.count(m[2])) << "TYPE after series of " << m[2];
      }
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, series)) << line;
    EXPECT_TRUE(typed.count(m[1])) << "series before TYPE: " << line;
    seen.insert(m[1]);
  }
}

TEST(Exposition, DcgmExporterNamesAndLabels) {
  EventCounts events{{{"power_cap_plateau", EventSeverity::kWarn}, 2}};
  std::string text = render_exposition(gb10_header(), gb10_sample(), events, 7);
  expect_valid_exposition(text);
  const std::string labels =
      R"({gpu="0",UUID="GPU-3c1f8e2a",pci_bus_id="0000000F:01:00.0",device="nvidia0",)"
      R"(modelName="NVIDIA GB10",Hostname="spark-01",DCGM_FI_DRIVER_VERSION="580.95.05"})";
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_TEMP" + labels + " 45\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_USAGE" + labels + " 11.17\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_SM_CLOCK" + labels + " 2522\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_UTIL" + labels + " 10\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_VIOLATION" + labels + " 10800240649000\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_POWER_VIOLATION counter\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + " 912345678\n"));
  EXPECT_THAT(text, HasSubstr("sparkdoc_memory_available_bytes 37068800000\n"));
  EXPECT_THAT(text, HasSubstr("sparkdoc_memory_page_cache_bytes 5222400000\n"));
  EXPECT_THAT(text, HasSubstr("sparkdoc_memory_psi_some_avg10_percent 1.25\n"));
  EXPECT_THAT(text, HasSubstr(R"(sparkdoc_gpu_process_memory_bytes{gpu="0",UUID="GPU-3c1f8e2a",)"));
  EXPECT_THAT(text, HasSubstr(R"(pid="48213",name="python3"} 95860113408)"));
  EXPECT_THAT(text, HasSubstr(R"(reason="hw_thermal"} 1.195386)"));
  EXPECT_THAT(text,
              HasSubstr(R"(sparkdoc_events_total{kind="power_cap_plateau",severity="warn"} 2)"));
  EXPECT_THAT(text,
              HasSubstr(R"(sparkdoc_events_total{kind="memory_pressure",severity="info"} 0)"));
  EXPECT_THAT(text, HasSubstr("sparkdoc_watch_samples_total 7\n"));
}

TEST(Exposition, UnreadValuesAreLeftOutNotSentinels) {
  std::string text = render_exposition(gb10_header(), gb10_sample(), {}, 1);
  // GB10: no framebuffer figure, no memory clock (dcgm-exporter leaks 9223372036854775794).
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_DEV_FB_USED")));
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_DEV_MEM_CLOCK")));
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_DEV_THERMAL_VIOLATION")));
  EXPECT_THAT(text, Not(HasSubstr("9223372036854775794")));
}

TEST(Exposition, BeforeTheFirstSampleOnlyTheWatchItself) {
  std::string text = render_exposition(gb10_header(), std::nullopt, {}, 0);
  expect_valid_exposition(text);
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI")));
  EXPECT_THAT(text, HasSubstr("sparkdoc_watch_samples_total 0\n"));
}

TEST(Exposition, FbUsedIsInMiBAsDcgmWritesIt) {
  Sample s = gb10_sample();
  s.gpus[0].mem_used_bytes = 3ull * 1024 * 1024 * 1024;
  EXPECT_THAT(render_exposition(gb10_header(), s, {}, 1), HasSubstr("} 3072\n"));
}

// Between two counter readings a scrape still sees the counters, at their latest values; a
// quantity read now is never replaced by an older one.
TEST(Exposition, CountersKeepTheirLatestReadingBetweenReadings) {
  Sample read = gb10_sample();
  read.gpus[0].counters.power = 7'000'000'000ull;
  read.gpus[0].energy_mj = 123456;
  Sample between = gb10_sample();
  between.gpus[0].counters = runlog::ClockCounters{};
  between.gpus[0].energy_mj.reset();
  between.gpus[0].power_w = 42.5;
  Sample shown = with_latest_counters(between, read);
  EXPECT_EQ(shown.gpus[0].counters, read.gpus[0].counters);
  EXPECT_EQ(shown.gpus[0].energy_mj, 123456u);
  EXPECT_EQ(shown.gpus[0].power_w, 42.5);
  EXPECT_THAT(render_exposition(gb10_header(), shown, {}, 2),
              HasSubstr("DCGM_FI_DEV_POWER_VIOLATION"));
  EXPECT_EQ(with_latest_counters(between, std::nullopt), between);
}

TEST(Exposition, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(View, PlainLineHasTheFigures) {
  EXPECT_EQ(render_line(gb10_sample()),
            "00:53:20 GPU0 11.2 W  45 C  SM 2522 MHz  util 10% | avail 37.1 GB of 130.7 GB  cache "
            "5.2 GB  PSI some 1.2%");
}

// The cache on screen is the one page_cache_growth judges: Cached + Buffers - Shmem.
TEST(View, CacheIsCountedAsTheDetectorsCountIt) {
  Sample s = gb10_sample();
  s.mem.buffers_bytes = 800000000;
  s.mem.shmem_bytes = 1022400000;
  EXPECT_THAT(render_line(s), HasSubstr("cache 5.0 GB"));
}

TEST(View, BlockFitsTheTerminal) {
  ViewContext context{3, "run.jsonl", ""};
  auto block = render_block(gb10_header(), gb10_sample(), {}, context, 60);
  ASSERT_GE(block.size(), 4u);
  EXPECT_THAT(block[0], HasSubstr("sparkdoc watch"));
  EXPECT_THAT(block[1], HasSubstr("GPU 0 NVIDIA GB10"));
  EXPECT_THAT(block[2], HasSubstr("48213 python3 95.9 GB"));
  for (const std::string& line : block) EXPECT_LE(line.size(), 60u) << line;
}

TEST(View, EventLine) {
  runlog::Event e{
      1796000000, "power_cap_plateau", EventSeverity::kWarn, 0, "GPU 0: held at 99 W", 16, {}};
  EXPECT_EQ(render_event_line(e), "00:53:20 WARN power_cap_plateau: GPU 0: held at 99 W");
}

}  // namespace
}  // namespace sparkdoc::report
