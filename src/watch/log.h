// The watch log: JSON Lines, one record per line, each line written whole and flushed.
//
//   {"type":"header","sparkdoc_version":...,"started":"2026-11-30T12:00:00.000Z","interval_s":1.0,
//    "host":...,"platform":"dgx-spark"|"other","gpus":[{"index":0,"name":...,"uuid":...,
//    "power_limit_w":...}], ...}
//   {"type":"sample","t":"...Z","ts":1764504000.123,"gpus":[{"index":0,"power_w":...}],
//    "mem":{...}}
//   {"type":"event","t":"...Z","ts":...,"kind":"power_cap_plateau","severity":"warn","gpu":0,
//    "message":"..."}
//
// Keys leave the process, so they are append-only: a reader ignores keys it does not know and
// a writer may add keys, never rename or drop them. A quantity that could not be read is left
// out of its object. The field list is docs/WATCH.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "core/result.h"
#include "watch/sample.h"

namespace sparkdoc::watch {

// "info", "warn".
std::string_view severity_name(Severity severity);

nlohmann::ordered_json header_to_json(const Header& header);
nlohmann::ordered_json sample_to_json(const Sample& sample);
nlohmann::ordered_json event_to_json(const Event& event);

using Record = std::variant<Header, Sample, Event>;

// One line of a log. Errors: not JSON, not an object, no known "type", or a known key whose
// value has the wrong JSON type. Unknown keys are ignored; absent and null values read as
// absent. Never throws.
Result<Record> parse_log_line(std::string_view line);

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

// The compact one-line form of a record, as the log and `--json` write it.
std::string dump_line(const nlohmann::ordered_json& record);

}  // namespace sparkdoc::watch
