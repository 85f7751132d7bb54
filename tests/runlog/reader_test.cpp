// The tolerant reader of the run log: a run folder, a file, damage, and the run records
// written and read back.
#include "runlog/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../sys/temp_tree.h"
#include "runlog/writer.h"

namespace sparkdoc::runlog {
namespace {

using ::testing::HasSubstr;

std::string small_dir() {
  return std::string(SPARKDOC_FIXTURES) + "/runlog/small";
}

TEST(ParseLog, ReadsTheWatchLogAndStopsAtTheCutLine) {
  auto log = read_log(small_dir() + "/watch.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_TRUE(log->header);
  EXPECT_EQ(log->header->host, "spark-01");
  EXPECT_EQ(log->header->platform, "dgx-spark");
  ASSERT_EQ(log->header->gpus.size(), 1u);
  EXPECT_EQ(log->header->gpus[0].name, "NVIDIA GB10");
  EXPECT_FALSE(log->header->gpus[0].power_limit_w);  // null on GB10
  ASSERT_EQ(log->samples.size(), 6u);
  EXPECT_EQ(log->events.size(), 4u);
  EXPECT_GT(log->truncated_bytes, 0u);
  ASSERT_EQ(log->problems.size(), 1u);
  EXPECT_THAT(log->problems[0], HasSubstr("watch.jsonl line 12: not a JSON object"));
  // Missing and null values read as missing.
  EXPECT_FALSE(log->samples[0].gpus[0].mem_used_bytes);
  EXPECT_FALSE(log->samples[2].gpus[0].power_w);
  EXPECT_FALSE(log->samples[2].gpus[0].mem_clock_mhz);
  EXPECT_FALSE(log->samples[4].mem.total_bytes);
  EXPECT_EQ(log->samples[3].gpus[0].processes->size(), 2u);
  EXPECT_EQ(log->samples[0].gpus[0].counters.power, 1000000000u);
  EXPECT_FALSE(log->run_start);
}

// Issue 21 item 11: a line far longer than any record is skipped without being held (a 1 GB
// one-line log took 48.6 s and 4.1 GB); the records around it still read, line numbers intact,
// whichever way the file is cut into chunks.
TEST(ParseLog, AnOverlongLineIsSkippedAndTheRestReads) {
  std::ifstream in(small_dir() + "/watch.jsonl");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  sys::testing::TempTree tree;
  {
    std::ofstream out(tree.path() + "/watch.jsonl");
    out << first << "\n";
    std::string junk(kLogMaxLineBytes, 'x');
    for (int i = 0; i < 3; ++i) out << junk;  // 3 MiB with no newline
    out << "\n\n" << second << "\n";
    out << junk << junk;  // a cut last line, too long to be a record
  }
  auto log = read_log(tree.path() + "/watch.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_TRUE(log->header);
  EXPECT_EQ(log->samples.size(), 1u);
  ASSERT_EQ(log->problems.size(), 2u);
  EXPECT_THAT(log->problems[0], HasSubstr("watch.jsonl line 2: longer than 1048576 bytes (3145728 "
                                          "bytes); skipped"));
  EXPECT_THAT(log->problems[1], HasSubstr("watch.jsonl line 5: longer than 1048576 bytes (2097152 "
                                          "bytes, no newline at the end); skipped"));
  EXPECT_EQ(log->truncated_bytes, 0u);

  // The same text through the in-memory reader: the same records and the same line numbers.
  std::string text =
      first + "\n" + std::string(kLogMaxLineBytes + 1, 'x') + "\n\nnot json\n" + second + "\n";
  RunLog same = parse_log(text, "watch.jsonl");
  EXPECT_TRUE(same.header);
  EXPECT_EQ(same.samples.size(), 1u);
  ASSERT_EQ(same.problems.size(), 2u);
  EXPECT_THAT(same.problems[0], HasSubstr("line 2: longer than"));
  EXPECT_THAT(same.problems[1], HasSubstr("line 4: not a JSON object"));
}

TEST(ParseLog, AFolderBringsBothFiles) {
  auto log = read_log(small_dir());
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_TRUE(log->run_start);
  ASSERT_TRUE(log->run_end);
  EXPECT_EQ(log->samples.size(), 6u);
  EXPECT_EQ(log->run_start->argv.size(), 4u);
  EXPECT_EQ(log->run_start->env_removed.size(), 3u);
  EXPECT_EQ(log->run_start->tuned.size(), 1u);
  EXPECT_EQ(log->cache_drops.size(), 2u);
  ASSERT_TRUE(log->load_window_end);
  EXPECT_THAT(log->load_window_end->reason, HasSubstr("stopped growing"));
  EXPECT_EQ(log->run_end->restored.size(), 1u);
}

TEST(ParseLog, ARunLogBringsTheWatchLogItNames) {
  auto log = read_log(small_dir() + "/run.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_TRUE(log->header);
  EXPECT_EQ(log->samples.size(), 6u);
}

TEST(ParseLog, NothingReadableIsAnError) {
  EXPECT_FALSE(read_log("/nonexistent/watch.jsonl"));
  sys::testing::TempTree tree;
  EXPECT_FALSE(read_log(tree.path()));
}

// A file that is no log (text, bytes, an empty file) is an error that says what was found,
// not an empty report; a damaged log with one good record is still read.
TEST(ParseLog, AFileWithoutRecordsIsAnError) {
  sys::testing::TempTree tree;
  tree.write("text.txt", "hello\nworld\n");
  tree.write("empty.jsonl", "");
  tree.write("damaged.jsonl", "garbage\n{\"type\":\"event\",\"ts\":5,\"kind\":\"x\"}\n");
  auto text = read_log(tree.path() + "/text.txt");
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("no sparkdoc log records (text.txt line 1: not a "
                                              "JSON object, and 1 more)"));
  EXPECT_THAT(text.error().message, HasSubstr("sparkdoc watch --log"));
  auto empty = read_log(tree.path() + "/empty.jsonl");
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("no sparkdoc log records (empty)"));
  auto damaged = read_log(tree.path() + "/damaged.jsonl");
  ASSERT_TRUE(damaged) << damaged.error().message;
  EXPECT_EQ(damaged->events.size(), 1u);
  EXPECT_EQ(damaged->problems.size(), 1u);
}

TEST(ParseLog, WrongTypesAndUnknownLinesAreTolerated) {
  RunLog log = parse_log(
      "{\"type\":\"sample\",\"ts\":\"soon\"}\n"
      "{\"type\":\"sample\",\"t\":\"2026-11-29T10:15:01Z\",\"gpus\":[{\"index\":\"0\",\"power_w\":"
      "\"high\",\"temp_c\":true,\"processes\":[{\"name\":\"x\"},{\"pid\":7,\"used_bytes\":-5}]}],"
      "\"mem\":{\"total_bytes\":1.5e300}}\n"
      "{\"type\":\"future_kind\",\"ts\":1}\n"
      "[1,2,3]\n"
      "\n"
      "{\"type\":\"event\",\"ts\":5,\"gpu\":1e30}\n");
  ASSERT_EQ(log.samples.size(), 1u);
  EXPECT_EQ(log.samples[0].ts, 1795947301.0);
  const GpuSample& g = log.samples[0].gpus[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_FALSE(g.power_w);
  EXPECT_FALSE(g.temp_c);
  ASSERT_EQ(g.processes->size(), 1u);
  EXPECT_FALSE((*g.processes)[0].used_bytes);
  EXPECT_FALSE(log.samples[0].mem.total_bytes);
  EXPECT_EQ(log.unknown_lines, 1u);
  EXPECT_EQ(log.problems.size(), 2u);  // the sample without a time, the array
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_FALSE(log.events[0].gpu);
}

TEST(ParseLog, AWholeLastLineWithoutNewlineCounts) {
  RunLog log = parse_log("{\"type\":\"event\",\"ts\":5,\"kind\":\"k\"}");
  EXPECT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.truncated_bytes, 0u);
}

TEST(ParseLog, SortsByTime) {
  RunLog log = parse_log(
      "{\"type\":\"sample\",\"ts\":3}\n{\"type\":\"sample\",\"ts\":1}\n{\"type\":\"sample\",\"ts\":"
      "2}\n");
  ASSERT_EQ(log.samples.size(), 3u);
  EXPECT_EQ(log.samples[0].ts, 1);
  EXPECT_EQ(log.samples[2].ts, 3);
}

TEST(RunLogLines, RoundTrip) {
  RunStart start;
  start.ts = 1795947300.5;
  start.sparkdoc_version = "0.1.0";
  start.host = "h";
  start.pid = 10;
  start.child_pid = 11;
  start.argv = {"python", "train.py", "it's \"quoted\""};
  start.cwd = "/w";
  start.env_removed = {"RANK"};
  start.env_set = {{"TOKENIZERS_PARALLELISM", "false"}};
  start.watch_log = "watch.jsonl";
  start.telemetry = "watch sidecar pid 12";
  start.preflight = "ready";
  start.oom_score_adj = 300;
  start.io_priority = "best-effort 7";
  start.tuned = {{"/proc/sys/vm/min_free_kbytes", "45166", "1048576"}};
  start.drop_cache_every_s = 20;
  start.drop_cache_for_s = 600;
  RunEnd end;
  end.ts = 1795947360;
  end.exit_status = 143;
  end.signal = "SIGTERM";
  end.duration_s = 59.5;
  end.signals_forwarded = {"SIGTERM"};
  end.restored = {{"/proc/sys/vm/min_free_kbytes", "45166", true, ""}};
  end.notes = {"n"};
  CacheDrop drop{1795947320, false, "Permission denied"};
  LoadWindowEnd window{1795947340, "time limit"};
  std::string text =
      to_line(start) + "\n" + to_line(drop) + "\n" + to_line(window) + "\n" + to_line(end) + "\n";
  RunLog log = parse_log(text);
  EXPECT_TRUE(log.problems.empty());
  ASSERT_TRUE(log.run_start);
  EXPECT_EQ(*log.run_start, start);
  ASSERT_TRUE(log.run_end);
  EXPECT_EQ(*log.run_end, end);
  ASSERT_EQ(log.cache_drops.size(), 1u);
  EXPECT_EQ(log.cache_drops[0], drop);
  EXPECT_EQ(log.load_window_end, window);
}

// The run records are lines the strict reader takes too; their "t" is "ts" in whole seconds.
TEST(RunLogLines, ReadBackStrictly) {
  RunStart start;
  start.ts = 1795947300.5;
  start.argv = {"python", "train.py"};
  RunEnd end;
  end.ts = 1795947360;
  end.restored = {{"/proc/sys/vm/min_free_kbytes", "45166", false, "Permission denied"}};
  for (const std::string& line : {to_line(start), to_line(CacheDrop{1795947320, true, ""}),
                                  to_line(LoadWindowEnd{1795947340, "time limit"}), to_line(end)}) {
    auto record = parse_line(line, Mode::kStrict);
    EXPECT_TRUE(record) << record.error().message << "\n" << line;
  }
  EXPECT_THAT(to_line(start), ::testing::StartsWith(R"({"argv":["python","train.py"],)"));
  EXPECT_THAT(to_line(start), HasSubstr(R"("t":"2026-11-29T10:15:00Z","telemetry":"",)"));
  EXPECT_THAT(to_line(CacheDrop{1795947320, true, ""}), HasSubstr(R"("error":null,)"));
}

// One reader, two modes: what strict mode rejects, tolerant mode reads as missing.
TEST(ParseLine, AWrongTypeIsAnErrorWhenStrictAndMissingWhenTolerant) {
  const std::string line =
      R"({"type":"sample","ts":5,"gpus":[{"index":0,"temp_c":"hot","power_w":50}]})";
  auto strict = parse_line(line, Mode::kStrict);
  ASSERT_FALSE(strict);
  EXPECT_THAT(strict.error().message, HasSubstr("\"temp_c\" has the wrong type"));
  auto tolerant = parse_line(line, Mode::kTolerant);
  ASSERT_TRUE(tolerant) << tolerant.error().message;
  const Sample& s = std::get<Sample>(*tolerant);
  EXPECT_FALSE(s.gpus.at(0).temp_c);
  EXPECT_EQ(s.gpus.at(0).power_w, 50);

  EXPECT_FALSE(parse_line(R"({"type":"future_kind","ts":1})", Mode::kStrict));
  auto unknown = parse_line(R"({"type":"future_kind","ts":1})", Mode::kTolerant);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(std::get<UnknownRecord>(*unknown).type, "future_kind");

  const std::string event = R"({"type":"event","ts":1,"kind":"k","severity":"loud","message":"m"})";
  EXPECT_FALSE(parse_line(event, Mode::kStrict));
  auto tolerant_event = parse_line(event, Mode::kTolerant);
  ASSERT_TRUE(tolerant_event);
  EXPECT_EQ(std::get<Event>(*tolerant_event).severity, EventSeverity::kInfo);
}

TEST(LogFollower, ReadsOnlyWholeLinesAndPicksUpTheRest) {
  sys::testing::TempTree tree;
  std::string path = tree.path() + "/watch.jsonl";
  LogFollower follower(path);
  EXPECT_EQ(follower.poll(), 0u);  // not there yet
  {
    std::ofstream out(path);
    out << "{\"type\":\"sample\",\"ts\":1}\n{\"type\":\"sample\",\"ts\":2";
  }
  EXPECT_EQ(follower.poll(), 1u);
  {
    std::ofstream out(path, std::ios::app);
    out << "}\n{\"type\":\"event\",\"ts\":3}\n";
  }
  EXPECT_EQ(follower.poll(), 2u);
  EXPECT_EQ(follower.log().samples.size(), 2u);
  EXPECT_EQ(follower.log().events.size(), 1u);
  EXPECT_EQ(follower.poll(), 0u);
}

// The follower cuts lines as read_log does: a damaged line is named by its line in the file, not
// in the poll that read it, and a line longer than any record is skipped, not held.
TEST(LogFollower, NumbersLinesAcrossPollsAndSkipsAnOverlongLine) {
  sys::testing::TempTree tree;
  std::string path = tree.path() + "/watch.jsonl";
  LogFollower follower(path);
  {
    std::ofstream out(path);
    out << "{\"type\":\"sample\",\"ts\":1}\n";
  }
  EXPECT_EQ(follower.poll(), 1u);
  {
    std::ofstream out(path, std::ios::app);
    out << "oops\n" << std::string(kLogMaxLineBytes + 10, 'x');
  }
  EXPECT_EQ(follower.poll(), 0u);
  {
    std::ofstream out(path, std::ios::app);
    out << "\n{\"type\":\"sample\",\"ts\":2}\n";
  }
  EXPECT_EQ(follower.poll(), 1u);
  ASSERT_EQ(follower.log().problems.size(), 2u);
  EXPECT_THAT(follower.log().problems[0], HasSubstr("watch.jsonl line 2: not a JSON object"));
  EXPECT_THAT(follower.log().problems[1], HasSubstr("watch.jsonl line 3: longer than"));
}

}  // namespace
}  // namespace sparkdoc::runlog
