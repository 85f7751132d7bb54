// `sparkdoc watch` end to end, with the fake NVML: the JSON stream, the files, the signals,
// the endpoint and the usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/fs.h"
#include "core/strings.h"
#include "http_client.h"

namespace sparkdoc {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/" + name;
}

std::string scratch(const std::string& name) {
  return std::string(SPARKDOC_BINARY_DIR) + "/watch_cli_test_" + name;
}

// The environment that loads the fake NVML answering from `gpu_fixture`.
std::string fake_env(const std::string& gpu_fixture) {
  return std::string("env SPARKDOC_NVML_LIBRARY=") + SPARKDOC_FAKE_NVML +
         " SPARKDOC_FAKE_GPU_FIXTURE=" + fixture("gpu/" + gpu_fixture) + " ";
}

std::string watch_command(const std::string& gpu_fixture, const std::string& args) {
  return fake_env(gpu_fixture) + SPARKDOC_BIN + " watch --root " + fixture("procfs/gb10-watch") +
         " " + args;
}

struct Outcome {
  int status = -1;
  std::string out;
};

// Runs a shell command line; stdout only unless the command redirects stderr itself.
Outcome run_shell(const std::string& command) {
  Outcome r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// Starts `command` in the background; its pid is sparkdoc's own (the shell and env exec it).
// With `block_stop_signals`, it starts with SIGINT and SIGTERM blocked, as a launcher that
// gates signals might leave them.
pid_t spawn(const std::string& command, bool block_stop_signals = false) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (block_stop_signals) {
      sigset_t blocked;
      sigemptyset(&blocked);
      sigaddset(&blocked, SIGINT);
      sigaddset(&blocked, SIGTERM);
      ::sigprocmask(SIG_BLOCK, &blocked, nullptr);
    }
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Waits up to 10 s for `done()`.
template <class Done>
bool eventually(Done done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

size_t line_count(const std::string& path) {
  auto text = read_text(path);
  return text ? static_cast<size_t>(std::count(text->begin(), text->end(), '\n')) : 0;
}

int wait_status(pid_t pid) {
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return -1;
}

// Every line of a log file is one whole JSON object, the first a header.
std::vector<json> log_records(const std::string& path) {
  std::string text = read_text(path).value_or("");
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "a line cut short";
  std::vector<json> records;
  for (auto line : lines(text)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    records.push_back(j);
  }
  if (!records.empty()) {
    EXPECT_EQ(records.front()["type"], "header");
  }
  return records;
}

TEST(WatchCli, JsonStreamCarriesTheTracesEventsAtTheirSamples) {
  Outcome r =
      run_shell(watch_command("gb10-throttle-trace.json",
                               "--count 36 --interval 50ms --counter-interval 0 --json"));
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<std::tuple<size_t, std::string, std::string>> events;
  size_t samples = 0;
  size_t index = 0;
  for (auto line : lines(r.out)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    if (index++ == 0) {
      EXPECT_EQ(j["type"], "header");
      EXPECT_EQ(j["platform"], "dgx-spark");
      EXPECT_EQ(j["interval_s"], 0.05);
      EXPECT_EQ(j["gpus"][0]["uuid"], "GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c");
    }
    if (j["type"] == "sample") ++samples;
    if (j["type"] == "event") {
      events.emplace_back(j["sample"].get<size_t>(), j["kind"].get<std::string>(),
                          j["severity"].get<std::string>());
    }
  }
  EXPECT_EQ(samples, 36u);
  // The trace's events (tests/fixtures/watch/expected-events.json) but the plateau, whose 60 s
  // window is longer than this run.
  using E = std::tuple<size_t, std::string, std::string>;
  EXPECT_EQ(events, (std::vector<E>{{2, "new_gpu_process", "info"},
                                    {6, "clock_slowdown", "info"},
                                    {22, "clock_slowdown", "warn"},
                                    {26, "sm_clock_drop", "warn"},
                                    {30, "new_gpu_process", "warn"},
                                    {34, "gpu_process_exit", "info"}}));
}

TEST(WatchCli, LogAndCsvFilesWithQuiet) {
  std::string log = scratch("quiet.jsonl");
  std::string csv = scratch("quiet.csv");
  std::remove(log.c_str());
  std::remove(csv.c_str());
  Outcome r = run_shell(watch_command(
      "gb10.json", "--count 3 --interval 50ms --quiet --log " + log + " --csv " + csv + " 2>&1"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
  auto records = log_records(log);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[1]["gpus"][0]["power_w"], 11.17);
  EXPECT_FALSE(records[1]["gpus"][0].contains("mem_used_bytes"));
  std::string text = read_text(csv).value_or("");
  auto rows = lines(text);
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[0], "timestamp, temperature.gpu, power.draw [W]");
  std::regex row(R"(^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 45, 11\.17 W$)");
  for (size_t i = 1; i < 4; ++i)
    EXPECT_TRUE(std::regex_match(std::string(rows[i]), row)) << rows[i];
}

// An existing --log or --csv is neither followed (a link planted at the name would make root
// write wherever it points) nor truncated without --force; --force replaces a regular file.
TEST(WatchCli, AnExistingLogIsNeitherFollowedNorTruncatedUnlessForced) {
  std::string victim = scratch("victim");
  std::string link = scratch("link.jsonl");
  std::string old = scratch("old.jsonl");
  for (const std::string& f : {victim, link, old}) std::remove(f.c_str());
  ASSERT_TRUE(std::ofstream(victim) << "precious\n");
  ASSERT_TRUE(std::ofstream(old) << "an earlier watch\n");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  for (const std::string option : {"--log ", "--csv "}) {
    for (const std::string force : {"", "--force "}) {
      Outcome r = run_shell(watch_command(
          "gb10.json", "--count 1 --interval 50ms --quiet " + force + option + link + " 2>&1"));
      EXPECT_EQ(r.status, 2) << option << force << r.out;
      EXPECT_THAT(r.out, HasSubstr("is a symbolic link")) << option << force;
    }
    Outcome kept = run_shell(
        watch_command("gb10.json", "--count 1 --interval 50ms --quiet " + option + old + " 2>&1"));
    EXPECT_EQ(kept.status, 2) << option << kept.out;
    EXPECT_THAT(kept.out, HasSubstr("already exists; pass --force to replace it")) << option;
    EXPECT_EQ(read_text(old).value_or(""), "an earlier watch\n") << option;
  }
  EXPECT_EQ(read_text(victim).value_or(""), "precious\n");
  Outcome forced = run_shell(watch_command(
      "gb10.json", "--count 1 --interval 50ms --quiet --force --log " + old + " 2>&1"));
  ASSERT_EQ(forced.status, 0) << forced.out;
  EXPECT_EQ(log_records(old).size(), 2u);
}

TEST(WatchCli, DurationEndsTheWatch) {
  Outcome r = run_shell(watch_command("gb10.json", "--duration 300ms --interval 100ms --json"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
}

TEST(WatchCli, PlainLinesWhenNotATerminal) {
  Outcome r = run_shell(watch_command("gb10.json", "--count 2 --interval 50ms"));
  ASSERT_EQ(r.status, 0) << r.out;
  auto rows = lines(r.out);
  ASSERT_GE(rows.size(), 2u);
  EXPECT_THAT(std::string(rows[0]), HasSubstr("GPU0 11.2 W  45 C  SM 2522 MHz"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("\x1b[")));
}

// Stops a watch logging to a fresh file with `signal` once it has written `lines` lines;
// returns its exit status and leaves the log's records in `records`.
int stop_logging_watch(const std::string& name, int signal, size_t lines,
                       std::vector<json>& records, bool block_stop_signals = false) {
  std::string log = scratch(name);
  std::remove(log.c_str());
  pid_t pid =
      spawn(watch_command("gb10.json", "--interval 50ms --quiet --log " + log), block_stop_signals);
  bool written = eventually([&] { return line_count(log) >= lines; });
  ::kill(pid, signal);
  int status = wait_status(pid);
  EXPECT_TRUE(written) << name;
  records = log_records(log);
  return status;
}

TEST(WatchCli, SigtermEndsCleanlyWithEveryLineOnDisk) {
  std::vector<json> records;
  EXPECT_EQ(stop_logging_watch("sigterm.jsonl", SIGTERM, 4, records), 0);
  EXPECT_GE(records.size(), 4u);
}

TEST(WatchCli, SigtermEndsItEvenWhenTheLauncherLeftItBlocked) {
  std::vector<json> records;
  EXPECT_EQ(stop_logging_watch("blocked.jsonl", SIGTERM, 3, records, true), 0);
}

TEST(WatchCli, SigkillLosesAtMostTheLineInFlight) {
  std::vector<json> records;
  EXPECT_EQ(stop_logging_watch("sigkill.jsonl", SIGKILL, 6, records), 128 + SIGKILL);
  EXPECT_GE(records.size(), 6u);
}

TEST(WatchCli, ListenServesPrometheusMetrics) {
  std::string err = scratch("listen.err");
  std::remove(err.c_str());
  pid_t pid = spawn(watch_command(
      "gb10.json", "--interval 100ms --listen 127.0.0.1:0 --json > /dev/null 2> " + err));
  std::smatch m;
  std::regex url(R"(metrics on http://127\.0\.0\.1:(\d+)/metrics)");
  std::string text;
  ASSERT_TRUE(eventually([&] {
    text = read_text(err).value_or("");
    return std::regex_search(text, m, url);
  })) << text;
  auto port = static_cast<uint16_t>(std::stoi(m[1]));
  std::string reply;
  ASSERT_TRUE(eventually([&] {
    reply = watch::exchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    return reply.find("DCGM_FI_DEV_POWER_USAGE") != std::string::npos;
  })) << reply;
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(reply, HasSubstr(R"(DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-3c1f8e2a)"));
  EXPECT_THAT(reply, HasSubstr(R"(modelName="NVIDIA GB10")"));
  EXPECT_THAT(reply, HasSubstr("sparkdoc_memory_available_bytes 121411960832\n"));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_status(pid), 0);
}

TEST(WatchCli, UsageErrors) {
  for (const char* args :
       {"--interval 0", "--interval 10ms", "--interval soon", "--duration x", "--listen 9400",
        "--count 1 --log /nonexistent-dir/run.jsonl", "--count 1 --csv /nonexistent-dir/run.csv",
        "--counter-interval=-1s", "--counter-interval often", "--count 0"}) {
    Outcome r = run_shell(watch_command("gb10.json", std::string(args) + " 2>&1"));
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("sparkdoc watch")) << args;
  }
}

TEST(WatchCli, WithoutADriverTheHostIsStillWatched) {
  Outcome r =
      run_shell(std::string("SPARKDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 ") +
                SPARKDOC_BIN + " watch --count 1 --json --root " + fixture("procfs/gb10-watch"));
  ASSERT_EQ(r.status, 0) << r.out;
  auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 2u);  // the header and the sample
  json header = json::parse(rows[0]);
  EXPECT_EQ(header["gpus"].size(), 0u);
  EXPECT_EQ(header["unavailable"][0]["field"], "gpus");
  json sample = json::parse(rows[1]);
  EXPECT_EQ(sample["mem"]["available_bytes"], 121411960832ull);
}

}  // namespace
}  // namespace sparkdoc
