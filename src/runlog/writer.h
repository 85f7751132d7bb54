// Writing the run log: each record as one compact JSON line, and the file a watch log goes to.
// The records and their keys are model/runlog.h's; docs/WATCH.md and docs/RUN.md list every
// key.
//
// watch.jsonl, key order as listed; a quantity not read is left out of its object:
//   {"type":"header","sparkdoc_version":...,"started":"2026-11-30T12:00:00.000Z",
//    "started_ts":...,"interval_s":1.0,"host":...,"platform":"dgx-spark"|"other",
//    "gpus":[{"index":0,"name":...,"uuid":...,"power_limit_w":...}],"unavailable":[...]}
//   {"type":"sample","t":"...Z","ts":1764504000.123,"gpus":[{"index":0,"power_w":...}],
//    "mem":{...}}
//   {"type":"event","t":"...Z","ts":...,"kind":"power_cap_plateau","severity":"warn","gpu":0,
//    "message":"...","sample":16}
// run.jsonl, keys sorted; every key written, a missing value as null:
//   {"argv":[...],"child_pid":...,...,"type":"run_start",...}   (also cache_drop,
//   load_window_end, run_end)
//
// "t" is "ts" in ISO 8601 UTC: with milliseconds in watch.jsonl, whole seconds in run.jsonl.
// Keys leave the process, so they are append-only: a reader ignores keys it does not know and
// a writer may add keys, never rename or drop them.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "model/runlog.h"

namespace sparkdoc::runlog {

// The record as one line of JSON, without the newline. Text that is not UTF-8 is written with
// U+FFFD in its place.
std::string to_line(const LogHeader& header);
std::string to_line(const Sample& sample);
std::string to_line(const Event& event);
std::string to_line(const RunStart& start);
std::string to_line(const CacheDrop& drop);
std::string to_line(const LoadWindowEnd& end);
std::string to_line(const RunEnd& end);

// A file written one line at a time: each line goes out in one write(2) and is then
// fdatasync'd, so a killed watch loses at most the line in flight and a machine that reboots
// under load (G4) keeps everything written before. Move-only; closes on destruction.
class LineFile {
 public:
  // Creates `path` as a new file (mode 0644), never through a link. An existing regular file is
  // refused (the message names --force), or with `replace` replaced by a new file.
  static Result<LineFile> create(const std::string& path, bool replace = false);

  LineFile(LineFile&& other) noexcept;
  LineFile& operator=(LineFile&& other) noexcept;
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;
  ~LineFile();

  // Writes `line` and a newline. Errors carry errno's text (disk full, I/O error).
  Result<void> write_line(std::string_view line);
  const std::string& path() const { return path_; }

 private:
  LineFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace sparkdoc::runlog
