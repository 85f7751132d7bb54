// The run log: what `sparkdoc watch` writes (watch.jsonl) and what `sparkdoc run` writes beside
// it (run.jsonl), read back for the end-of-run summary and for `sparkdoc report`.
//
// Both files are JSON lines, one object per line, each written whole and flushed, so a
// kill -9 loses at most the line in flight. Every object has "type"; readers ignore types they
// do not know and fields they do not know, so fields may be added, never renamed. Any value may
// be missing or null. docs/RUN.md lists every field.
//
// watch.jsonl (written by `sparkdoc watch --log`):
//   {"type":"header","sparkdoc_version":"0.1.0","started":"2026-11-29T10:15:00Z",
//    "interval_s":1.0,"host":"spark-01","platform":"dgx-spark",
//    "gpus":[{"index":0,"name":"NVIDIA GB10","uuid":"GPU-...","power_limit_w":100.0}]}
//   {"type":"sample","t":"2026-11-29T10:15:01Z","ts":1795947301.0,
//    "gpus":[{"index":0,"power_w":96.1,"temp_c":71,"sm_clock_mhz":2405,"mem_clock_mhz":8533,
//             "util_pct":99,"mem_used_bytes":61000000000,"clock_event_reasons":4,
//             "clock_event_counters_ns":{"power":1200000000,"thermal":0},
//             "processes":[{"pid":4242,"name":"python","used_bytes":60100000000}]}],
//    "mem":{"total_bytes":...,"available_bytes":...,"cached_bytes":...,"anon_bytes":...,
//           "swap_used_bytes":...,"psi_some_avg10":0.0,"psi_full_avg10":0.0}}
//   {"type":"event","t":"...","ts":...,"kind":"power_cap_plateau","severity":"warn","gpu":0,
//    "message":"..."}
//
// run.jsonl (written by `sparkdoc run`):
//   {"type":"run_start", ...}      the command, its environment changes, tuning (RunStart)
//   {"type":"cache_drop", ...}     one per drop of the page cache in the load window
//   {"type":"load_window_end", ...} why the cache drops stopped
//   {"type":"run_end", ...}        how the command ended (RunEnd)
//
// Reading rules: a last line without its '\n' that is not a whole JSON object is a write cut
// short (kill -9, power loss): it is ignored and counted in truncated_bytes. A damaged whole
// line is skipped and reported in problems. A sample or event without a time ("ts", or "t" as
// ISO 8601 UTC) cannot be placed and is skipped with a problem. Values of the wrong JSON type
// read as missing.
//
// Threading: the functions are pure; a LogFollower is used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sparkdoc::runreport {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::optional<double> power_limit_w;
  bool operator==(const GpuInfo&) const = default;
};

struct LogHeader {
  std::string sparkdoc_version;
  std::string started;
  std::optional<double> interval_s;
  std::string host;
  std::string platform;              // "dgx-spark" | "other"
  std::string platform_description;  // "DGX Spark (NVIDIA GB10, ...)", when written
  std::string driver_version;
  std::vector<GpuInfo> gpus;
  bool operator==(const LogHeader&) const = default;
};

struct ProcessSample {
  int64_t pid = 0;
  std::string name;
  std::optional<uint64_t> used_bytes;
  bool operator==(const ProcessSample&) const = default;
};

struct GpuSample {
  int index = 0;
  std::optional<double> power_w;
  std::optional<double> temp_c;
  std::optional<double> sm_clock_mhz;
  std::optional<double> mem_clock_mhz;
  std::optional<double> util_pct;
  std::optional<uint64_t> mem_used_bytes;
  std::optional<uint64_t> clock_event_reasons;
  // Cumulative nanoseconds per reason ("power", "thermal", ...), as NVML counts them.
  std::map<std::string, uint64_t> clock_event_counters_ns;
  std::optional<std::vector<ProcessSample>> processes;  // nullopt: not read
  bool operator==(const GpuSample&) const = default;
};

struct MemSample {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> cached_bytes;
  std::optional<uint64_t> anon_bytes;
  std::optional<uint64_t> swap_used_bytes;
  std::optional<double> psi_some_avg10;
  std::optional<double> psi_full_avg10;
  bool operator==(const MemSample&) const = default;
};

struct Sample {
  std::string t;
  double ts = 0;  // unix seconds
  std::vector<GpuSample> gpus;
  MemSample mem;
  bool operator==(const Sample&) const = default;
};

struct Event {
  std::string t;
  double ts = 0;
  std::string kind;      // "power_cap_plateau", "page_cache_growth", ...
  std::string severity;  // "info" | "warn"
  std::optional<int> gpu;
  std::string message;
  bool operator==(const Event&) const = default;
};

// One kernel value `sparkdoc run` changed (journaled first) and what it found there.
struct TunedValue {
  std::string path;
  std::string old_value;
  std::string new_value;
  bool operator==(const TunedValue&) const = default;
};

// {"type":"run_start"}: written once the command is started, before it runs.
struct RunStart {
  std::string t;
  double ts = 0;
  std::string sparkdoc_version;
  std::string host;
  int64_t pid = 0;        // sparkdoc's
  int64_t child_pid = 0;  // the command's; also its process group id
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env_removed;        // names only, sorted
  std::map<std::string, std::string> env_set;  // what sparkdoc set, with the value
  bool distributed = false;                    // --distributed: nothing removed
  std::optional<std::string> watch_log;        // file name beside this log, or null
  std::string telemetry;                       // "watch sidecar pid N" or why there is none
  std::string preflight;                       // "ready", "ready-with-warnings", "blocked
                                               // (--force)", "skipped (--no-preflight)"
  std::optional<int> oom_score_adj;            // set on the command, or null
  std::string io_priority;                     // "best-effort 7" or why not set
  std::vector<TunedValue> tuned;
  std::optional<double> drop_cache_every_s;
  std::optional<double> drop_cache_for_s;
  bool operator==(const RunStart&) const = default;
};

// {"type":"cache_drop"}: one sync and drop_caches=3 during the load window.
struct CacheDrop {
  std::string t;
  double ts = 0;
  bool ok = false;
  std::string error;
  bool operator==(const CacheDrop&) const = default;
};

// {"type":"load_window_end"}: the cache drops stopped.
struct LoadWindowEnd {
  std::string t;
  double ts = 0;
  std::string reason;  // "GPU memory stable at 61.2 GB", "time limit 10 min 0 s", "command ended"
  bool operator==(const LoadWindowEnd&) const = default;
};

// A value written back when the run ended.
struct RestoredValue {
  std::string path;
  std::string value;
  bool ok = false;
  std::string error;
  bool operator==(const RestoredValue&) const = default;
};

// {"type":"run_end"}: how the command ended.
struct RunEnd {
  std::string t;
  double ts = 0;
  // What sparkdoc exits with, as a shell reports it: the command's exit code, or 128 + N when
  // signal N killed it.
  int exit_status = 0;
  std::optional<int> exit_code;       // when it exited
  std::optional<std::string> signal;  // "SIGTERM" when a signal killed it
  bool core_dumped = false;
  double duration_s = 0;
  std::vector<std::string> signals_forwarded;  // in order received
  std::vector<RestoredValue> restored;
  std::vector<std::string> notes;
  bool operator==(const RunEnd&) const = default;
};

struct RunLog {
  std::optional<LogHeader> header;
  std::vector<Sample> samples;  // in time order
  std::vector<Event> events;    // in time order
  std::optional<RunStart> run_start;
  std::vector<CacheDrop> cache_drops;
  std::optional<LoadWindowEnd> load_window_end;
  std::optional<RunEnd> run_end;
  std::vector<std::string> problems;  // "watch.jsonl line 7: not JSON"
  size_t truncated_bytes = 0;         // unfinished last lines ignored
  size_t unknown_lines = 0;           // objects of a type this sparkdoc does not know
  bool operator==(const RunLog&) const = default;
};

// Parses one log's text (either file, or both concatenated) into `log`, adding to what is
// there. `source` names the file in problems. Never fails: damage is reported in the log.
void parse_log_into(RunLog& log, std::string_view text, std::string_view source);
// Sorts samples and events by time (stable: equal times keep file order).
void sort_by_time(RunLog& log);
// parse_log_into + sort_by_time on a fresh log.
RunLog parse_log(std::string_view text, std::string_view source = "log");

// Whether the log holds anything sparkdoc wrote that can be placed: a header, a sample, an
// event, a run line, or an object of a type this sparkdoc does not know (a newer writer).
bool holds_records(const RunLog& log);

// Reads a log from disk: a run folder (its watch.jsonl and run.jsonl), or one file; a run.jsonl
// that names its watch log ("watch_log") brings that file in too. Errors: nothing readable, or
// nothing read that holds_records (an empty file, a text or binary file that is no log: the
// message gives the first damaged line).
inline constexpr size_t kLogMaxBytes = size_t{2} << 30;
Result<RunLog> read_log(const std::string& path);

// The run log's own lines, one JSON object each (no newline), keys sorted.
std::string run_start_line(const RunStart& start);
std::string cache_drop_line(const CacheDrop& drop);
std::string load_window_end_line(const LoadWindowEnd& end);
std::string run_end_line(const RunEnd& end);

// Follows a log that another process is appending to: each poll() reads what was added since
// the last one and parses its complete lines; an unfinished last line waits for the next poll.
class LogFollower {
 public:
  explicit LogFollower(std::string path) : path_(std::move(path)) {}
  // Parses new complete lines into log(). Returns how many samples and events they added; a
  // missing file adds nothing (the writer may not have started yet).
  size_t poll();
  const RunLog& log() const { return log_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  std::string partial_;
  RunLog log_;
};

}  // namespace sparkdoc::runreport
