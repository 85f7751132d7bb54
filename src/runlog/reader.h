// Reading the run log back: one line in either of two modes, and the files of a run.
//
// The files are JSON lines, one object per line, each written whole (runlog/writer.h), so a
// kill -9 loses at most the line in flight. Every object has "type"; fields may be added, never
// renamed, so unknown keys are ignored in both modes, and absent and null values read as
// absent. docs/WATCH.md and docs/RUN.md list every field.
//
// Strict mode (tests, the fuzz target, replays of a log watch wrote) rejects what the writer
// would never write: a line that is not a JSON object, a record type this sparkdoc does not
// know, a known key whose value has the wrong JSON type or does not fit its field, a key the
// writer always writes left out (a sample's or event's "ts", a GPU's "index", ...), an event
// severity other than "info" or "warn".
//
// Tolerant mode (`sparkdoc report`, run's summary) takes what a killed writer, a full disk, an
// older or newer sparkdoc or a person's editor left: a value of the wrong type reads as
// missing, a GPU without an index takes its position, a process without a pid is skipped, an
// unknown type is an UnknownRecord. The one error is a timed record (sample, event and the run
// records) without a usable time: "ts" between 1970 and the year 5138, else "t" as ISO 8601
// UTC.
//
// read_log on top of it: a last line without its '\n' that is not a whole JSON object is a
// write cut short (kill -9, power loss): it is ignored and counted in truncated_bytes. A
// damaged whole line is skipped and reported in problems ("watch.jsonl line 7: not a JSON
// object").
//
// Threading: the functions are pure; a LogFollower is used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "core/result.h"
#include "model/runlog.h"

namespace sparkdoc::runlog {

enum class Mode { kStrict, kTolerant };

// An object of a type this sparkdoc does not know (a newer writer), in tolerant mode.
struct UnknownRecord {
  std::string type;  // "" when the line has none
  bool operator==(const UnknownRecord&) const = default;
};

using Record = std::variant<LogHeader, Sample, Event, RunStart, CacheDrop, LoadWindowEnd, RunEnd,
                            UnknownRecord>;

// One line of a log, without its newline. The error says what is wrong ("not a JSON object",
// "sample: \"ts\" has the wrong type", "event without a time (ts or t)"). Never throws.
Result<Record> parse_line(std::string_view line, Mode mode);

// Parses one log's text (either file, or both concatenated) in tolerant mode into `log`,
// adding to what is there (the first header stays). `source` names the file in problems.
// Never fails: damage is reported in the log.
void parse_log_into(RunLog& log, std::string_view text, std::string_view source);
// Sorts samples, events and cache drops by time (stable: equal times keep file order).
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
// The file is read in chunks; a line over kLogMaxLineBytes is skipped and named in problems.
inline constexpr size_t kLogMaxBytes = size_t{2} << 30;
inline constexpr size_t kLogMaxLineBytes = size_t{1} << 20;
Result<RunLog> read_log(const std::string& path);

namespace detail {
class LineReader;  // reader.cpp: a log cut into lines as its bytes arrive
}

// Follows a log that another process is appending to: each poll() reads what was added since
// the last one and parses its complete lines; an unfinished last line waits for the next poll.
// Lines are cut as read_log cuts them: numbered from the file's start across polls, and a line
// over kLogMaxLineBytes skipped without being held.
class LogFollower {
 public:
  explicit LogFollower(std::string path);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;  // its line reader points at log_
  LogFollower& operator=(const LogFollower&) = delete;
  // Parses new complete lines into log(). Returns how many samples and events they added; a
  // missing file adds nothing (the writer may not have started yet).
  size_t poll();
  const RunLog& log() const { return log_; }

 private:
  std::string path_;
  std::string source_;  // the file's name, as problems name it
  uint64_t offset_ = 0;
  RunLog log_;
  std::unique_ptr<detail::LineReader> lines_;
};

}  // namespace sparkdoc::runlog
