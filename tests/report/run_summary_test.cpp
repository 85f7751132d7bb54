// The run summary as text (golden) and JSON, and the HTML run page (golden, escaping, gaps,
// thinning), from the small fixture run and from literal log text.
#include "report/run_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "golden.h"
#include "report/run_page.h"
#include "runlog/reader.h"

namespace sparkdoc::report {
namespace {

using runlog::RunLog;
using ::testing::HasSubstr;
using ::testing::Not;

std::string small_dir() {
  return std::string(SPARKDOC_FIXTURES) + "/runlog/small";
}

facts::RunSummary small() {
  auto log = runlog::read_log(small_dir());
  EXPECT_TRUE(log);
  return facts::summarize_run(*log);
}

TEST(Summary, AnEmptyLogSaysSo) {
  facts::RunSummary s = facts::summarize_run(runlog::parse_log(""));
  EXPECT_FALSE(s.peak_gpu_mem_bytes);
  EXPECT_FALSE(s.power_capped_s);
  EXPECT_THAT(render_run_summary_text(s), HasSubstr("no telemetry"));
  std::string html = render_run_page(runlog::parse_log(""), s, RunPageOptions{});
  EXPECT_THAT(html, HasSubstr("No readings of this in the log."));
  EXPECT_THAT(html, HasSubstr("</html>"));
}

TEST(Summary, TextMatchesItsGolden) {
  testing::compare_or_update(testing::golden_dir() / "report-small.txt",
                             render_run_summary_text(small()));
}

TEST(Summary, JsonHasThePublicKeys) {
  nlohmann::json j = render_run_summary_json(small());
  for (const char* key : {"duration_s", "gpu_memory", "host_memory", "gpus", "power_capped_s",
                          "slowed_s", "events", "events_by_kind", "cache_drops", "end", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["gpu_memory"]["peak_bytes"], 67000000000u);
  EXPECT_EQ(j["end"]["exit_status"], 0);
}

TEST(Html, MatchesItsGolden) {
  auto log = runlog::read_log(small_dir());
  ASSERT_TRUE(log);
  RunPageOptions options;
  options.source = "small";
  std::string html = render_run_page(*log, facts::summarize_run(*log), options);
  testing::compare_or_update(testing::golden_dir() / "report-small.html", html);
}

TEST(Html, IsSelfContainedAndEscapesText) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"power_w\":50}]}\n"
      "{\"type\":\"event\",\"ts\":1,\"kind\":\"k\",\"severity\":\"warn\",\"message\":"
      "\"<script>alert(1)</script> & \\\"x\\\"\"}\n"
      "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{\"power_w\":60}]}\n");
  std::string html = render_run_page(log, facts::summarize_run(log), RunPageOptions{});
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
  // Nothing is fetched: no URL but the SVG namespace.
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
}

// A "?" tile said nothing of why (issue 18): it names what the samples lack.
TEST(Html, AnUnknownTileSaysWhy) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"power_w\":50}]}\n"
      "{\"type\":\"sample\",\"ts\":1,\"gpus\":[{\"power_w\":55}]}\n");
  std::string html = render_run_page(log, facts::summarize_run(log), RunPageOptions{});
  EXPECT_THAT(html, HasSubstr("<div class=\"v\">?</div><div class=\"k\">max GPU temperature</div>"
                              "<div class=\"why\">none of the 2 samples read a GPU temperature"));
  EXPECT_THAT(html, HasSubstr("none of the 2 samples read host memory"));
  std::string empty = render_run_page(
      runlog::parse_log(""), facts::summarize_run(runlog::parse_log("")), RunPageOptions{});
  EXPECT_THAT(empty, HasSubstr("<div class=\"why\">no telemetry in this log</div>"));
}

// Event markers were unlabelled lines (issue 18): each carries its number in the events table.
TEST(Html, EventMarkersAreNumberedAsInTheTable) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"power_w\":50}]}\n"
      "{\"type\":\"event\",\"ts\":1,\"kind\":\"a\",\"severity\":\"warn\",\"message\":\"m\"}\n"
      "{\"type\":\"event\",\"ts\":2,\"kind\":\"b\",\"severity\":\"info\",\"message\":\"n\"}\n"
      "{\"type\":\"sample\",\"ts\":3,\"gpus\":[{\"power_w\":60}]}\n");
  std::string html = render_run_page(log, facts::summarize_run(log), RunPageOptions{});
  EXPECT_THAT(html, HasSubstr("<title>1. 0:01 a: m</title>"));
  EXPECT_THAT(html, HasSubstr("<text class=\"evn\""));
  EXPECT_THAT(html, HasSubstr(">2</text>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"warn\"><td>1</td><td>0:01</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"info\"><td>2</td><td>0:02</td>"));
}

TEST(Html, AMissingValueBreaksTheLine) {
  RunLog log = runlog::parse_log(
      "{\"type\":\"sample\",\"ts\":0,\"gpus\":[{\"power_w\":50}]}\n"
      "{\"type\":\"sample\",\"ts\":1,\"gpus\":[{\"power_w\":55}]}\n"
      "{\"type\":\"sample\",\"ts\":2,\"gpus\":[{\"power_w\":null}]}\n"
      "{\"type\":\"sample\",\"ts\":3,\"gpus\":[{\"power_w\":60}]}\n"
      "{\"type\":\"sample\",\"ts\":4,\"gpus\":[{\"power_w\":62}]}\n");
  std::string html = render_run_page(log, facts::summarize_run(log), RunPageOptions{});
  auto power = html.find("id=\"power\"");
  ASSERT_NE(power, std::string::npos);
  auto path = html.find("<path class=\"line\"", power);
  ASSERT_NE(path, std::string::npos);
  auto end = html.find("\"><title>", path);
  std::string d = html.substr(path, end - path);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;
}

TEST(Html, LongLogsAreThinnedButKeepTheirPeak) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    double w = i == 12345 ? 250.0 : 100.0 + (i % 7);
    text += "{\"type\":\"sample\",\"ts\":" + std::to_string(i) +
            ",\"gpus\":[{\"power_w\":" + std::to_string(w) + "}]}\n";
  }
  RunLog log = runlog::parse_log(text);
  std::string html = render_run_page(log, facts::summarize_run(log), RunPageOptions{});
  EXPECT_LT(html.size(), 400000u);
  // The y axis reaches past the single 250 W sample, so it was drawn.
  EXPECT_THAT(html, HasSubstr(">300</text>"));
}

}  // namespace
}  // namespace sparkdoc::report
