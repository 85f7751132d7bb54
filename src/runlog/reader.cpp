#include "runlog/reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "core/fs.h"
#include "core/time.h"
#include "runlog/fields.h"

namespace sparkdoc::runlog {
namespace {

using nlohmann::json;

// The value under `key`; null reads as absent.
const json* find(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// Reads the fields of one record in one mode. In strict mode the first problem is kept, so a
// bad line is reported with its key; in tolerant mode a value that does not fit reads as
// missing and nothing is an error.
class Reader {
 public:
  explicit Reader(Mode mode) : mode_(mode) {}

  bool strict() const { return mode_ == Mode::kStrict; }

  // Absent or null: `out` keeps its value.
  template <class T>
  void value(const json& object, const char* key, T& out) {
    const json* v = find(object, key);
    if (v == nullptr) return;
    if (auto converted = convert<T>(*v)) {
      out = std::move(*converted);
    } else {
      complain(key, "has the wrong type");
    }
  }
  // Absent, null or (tolerant) not fitting: no value.
  template <class T>
  void value(const json& object, const char* key, std::optional<T>& out) {
    out.reset();
    const json* v = find(object, key);
    if (v == nullptr) return;
    out = convert<T>(*v);
    if (!out) complain(key, "has the wrong type");
  }
  // A key the writer always writes: in strict mode its absence is a problem too.
  template <class T>
  void required(const json& object, const char* key, T& out) {
    if (find(object, key) == nullptr) {
      complain(key, "is missing");
      return;
    }
    value(object, key, out);
  }

  // The array under `key`: none when absent, or (a problem) when not an array.
  const json* array_at(const json& object, const char* key) {
    const json* v = find(object, key);
    if (v != nullptr && !v->is_array()) {
      complain(key, "has the wrong type");
      return nullptr;
    }
    return v;
  }

  // Each element of the array under `key`, an object, read by `each`.
  template <class Each>
  void array(const json& object, const char* key, Each each) {
    const json* v = array_at(object, key);
    if (v == nullptr) return;
    for (const json& element : *v) {
      if (element.is_object()) {
        each(element);
      } else {
        complain(key, "holds a value that is not an object");
        if (strict()) return;
      }
    }
  }

  void strings(const json& object, const char* key, std::vector<std::string>& out) {
    const json* v = array_at(object, key);
    if (v == nullptr) return;
    for (const json& element : *v) {
      if (element.is_string()) {
        out.push_back(element.get<std::string>());
      } else {
        complain(key, "holds a value that is not a string");
      }
    }
  }

  void string_map(const json& parent, const char* key, std::map<std::string, std::string>& out) {
    const json* v = object(parent, key);
    if (v == nullptr) return;
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (it->is_string()) {
        out.emplace(it.key(), it->get<std::string>());
      } else {
        complain(key, "holds a value that is not a string");
      }
    }
  }

  const json* object(const json& parent, const char* key) {
    const json* v = find(parent, key);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      complain(key, "has the wrong type");
      return nullptr;
    }
    return v;
  }

  void value(const json& object, const char* key, std::vector<std::string>& out) {
    strings(object, key, out);
  }
  void value(const json& object, const char* key, std::map<std::string, std::string>& out) {
    string_map(object, key, out);
  }
  void value(const json& object, const char* key, std::vector<TunedValue>& out) {
    objects(object, key, out, TunedFields{});
  }
  void value(const json& object, const char* key, std::vector<RestoredItem>& out) {
    objects(object, key, out, RestoredFields{});
  }

  // The fields `fields` lists (runlog/fields.h).
  template <class T, class Fields>
  void fields(const json& object, T& out, Fields fields) {
    fields(out, [&](const char* key, auto& field, auto...) { value(object, key, field); });
  }
  // The array of objects under `key`, each read by `fields`.
  template <class T, class Fields>
  void objects(const json& object, const char* key, std::vector<T>& out, Fields list) {
    array(object, key, [&](const json& element) {
      T item;
      fields(element, item, list);
      out.push_back(std::move(item));
    });
  }

  void complain(const char* key, std::string_view problem) {
    if (strict() && error_.empty()) error_ = fmt::format("\"{}\" {}", key, problem);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  template <class T>
  std::optional<T> convert(const json& j) const {
    if constexpr (std::is_same_v<T, std::string>) {
      if (j.is_string()) return j.get<std::string>();
      return std::nullopt;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (j.is_boolean()) return j.get<bool>();
      return std::nullopt;
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!j.is_number()) return std::nullopt;
      double d = j.get<double>();
      if (!std::isfinite(d)) return std::nullopt;
      return static_cast<T>(d);
    } else if constexpr (std::is_unsigned_v<T>) {
      uint64_t v = 0;
      if (j.is_number_unsigned()) {
        v = j.get<uint64_t>();
      } else if (!strict() && j.is_number_float()) {
        // A whole number a script wrote as a float (6.1e10) reads rounded; the writer never
        // writes one.
        double d = j.get<double>();
        if (!std::isfinite(d) || d < 0 || d >= 18446744073709551616.0) return std::nullopt;
        v = static_cast<uint64_t>(std::round(d));
      } else {
        return std::nullopt;
      }
      if (v > std::numeric_limits<T>::max()) return std::nullopt;
      return static_cast<T>(v);
    } else {
      static_assert(std::is_signed_v<T> && std::is_integral_v<T>);
      if (!j.is_number_integer()) return std::nullopt;
      if (j.is_number_unsigned()) {
        uint64_t v = j.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
        return static_cast<T>(v);
      }
      int64_t v = j.get<int64_t>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return std::nullopt;
      }
      return static_cast<T>(v);
    }
  }

  Mode mode_;
  std::string error_;
};

// The time of a timed line. Strict: "ts", which the writer always writes. Tolerant: "ts" when
// it is a number, else "t" parsed; times outside 1970 to the year 5138 are not a clock's.
std::optional<double> time_of(const json& j, Reader& r) {
  std::optional<double> ts;
  if (r.strict()) {
    r.required(j, "ts", ts);
    return ts;
  }
  constexpr double kLatest = 1e11;
  r.value(j, "ts", ts);
  if (!ts) {
    std::optional<std::string> t;
    r.value(j, "t", t);
    if (t) ts = parse_iso8601_utc(*t);
  }
  if (!ts || *ts < 0 || *ts > kLatest) return std::nullopt;
  return ts;
}

LogHeader read_header(const json& j, Reader& r) {
  LogHeader h;
  h.platform.clear();  // as written, or empty
  r.value(j, "sparkdoc_version", h.sparkdoc_version);
  r.value(j, "started_ts", h.started_ts);
  if (!h.started_ts) {
    std::optional<std::string> started;
    r.value(j, "started", started);
    if (started) h.started_ts = parse_iso8601_utc(*started);
  }
  r.value(j, "interval_s", h.interval_s);
  r.value(j, "host", h.host);
  r.value(j, "platform", h.platform);
  r.value(j, "platform_description", h.platform_description);
  r.value(j, "unified_memory", h.unified_memory);
  r.value(j, "driver_version", h.driver_version);
  r.array(j, "gpus", [&](const json& g) {
    GpuInfo info;
    info.index = static_cast<unsigned>(h.gpus.size());
    r.required(g, "index", info.index);
    r.fields(g, info, GpuInfoFields{});
    h.gpus.push_back(std::move(info));
  });
  r.array(j, "unavailable", [&](const json& u) {
    Unavailable item;
    r.value(u, "gpu", item.gpu);
    r.required(u, "field", item.field);
    r.required(u, "reason", item.reason);
    h.unavailable.push_back(std::move(item));
  });
  return h;
}

Sample read_sample(const json& j, double ts, Reader& r) {
  Sample s;
  s.ts = ts;
  r.array(j, "gpus", [&](const json& g) {
    GpuSample gpu;
    gpu.index = static_cast<unsigned>(s.gpus.size());
    r.required(g, "index", gpu.index);
    r.fields(g, gpu, GpuFields{});
    if (const json* counters = r.object(g, "clock_event_counters_ns")) {
      r.fields(*counters, gpu.counters, CounterFields{});
    }
    // Absent: the list could not be read; [] is a list of none.
    if (const json* processes = find(g, "processes"); processes && processes->is_array()) {
      gpu.processes.emplace();
    }
    r.array(g, "processes", [&](const json& p) {
      std::optional<uint32_t> pid;
      r.required(p, "pid", pid);
      if (!pid) return;
      GpuProcessUse use;
      use.pid = *pid;
      r.fields(p, use, ProcessFields{});
      gpu.processes->push_back(std::move(use));
    });
    s.gpus.push_back(std::move(gpu));
  });
  if (const json* mem = r.object(j, "mem")) {
    r.fields(*mem, s.mem, MemoryFields{});
  }
  if (find(j, "kernel") != nullptr) r.value(j, "kernel", s.kernel);
  return s;
}

Event read_event(const json& j, double ts, Reader& r) {
  Event e;
  e.ts = ts;
  r.required(j, "kind", e.kind);
  std::string severity;
  r.required(j, "severity", severity);
  if (severity == "warn") {
    e.severity = EventSeverity::kWarn;
  } else if (severity != "info") {
    // Tolerant: any other word, or none, reads as info.
    r.complain("severity", "is neither \"info\" nor \"warn\"");
  }
  r.value(j, "gpu", e.gpu);
  r.required(j, "message", e.message);
  std::optional<uint64_t> sample;
  r.value(j, "sample", sample);
  e.sample = static_cast<size_t>(sample.value_or(0));
  r.value(j, "pid", e.pid);
  return e;
}

// A run record: its time and the fields its list names.
template <class T, class Fields>
Record read_run_record(const json& j, double ts, Reader& r) {
  T record;
  record.ts = ts;
  r.fields(j, record, Fields{});
  return record;
}

// The records placed in time, by type.
struct TimedType {
  std::string_view name;
  Record (*read)(const json& j, double ts, Reader& r);
};
template <auto read>
Record as_record(const json& j, double ts, Reader& r) {
  return read(j, ts, r);
}
constexpr TimedType kTimedTypes[] = {
    {"sample", as_record<read_sample>},
    {"event", as_record<read_event>},
    {"run_start", read_run_record<RunStart, RunStartFields>},
    {"cache_drop", read_run_record<CacheDrop, CacheDropFields>},
    {"load_window_end", read_run_record<LoadWindowEnd, LoadWindowEndFields>},
    {"run_end", read_run_record<RunEnd, RunEndFields>},
};

std::optional<json> parse_object(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

Result<Record> record_of(const json& j, Mode mode) {
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    if (mode == Mode::kStrict) return fail("no \"type\"");
    return UnknownRecord{};
  }
  const std::string& kind = type->get_ref<const std::string&>();
  Reader r(mode);
  Record record;
  if (kind == "header") {
    record = read_header(j, r);
  } else {
    const auto timed = std::find_if(std::begin(kTimedTypes), std::end(kTimedTypes),
                                    [&](const TimedType& t) { return t.name == kind; });
    if (timed == std::end(kTimedTypes)) {
      if (mode == Mode::kStrict) return fail(fmt::format("unknown record type \"{}\"", kind));
      return UnknownRecord{kind};
    }
    std::optional<double> ts = time_of(j, r);
    if (!ts) {
      if (!r.ok()) return fail(kind + ": " + r.error());
      return fail(kind + " without a time (ts or t)");
    }
    record = timed->read(j, *ts, r);
  }
  if (!r.ok()) return fail(kind + ": " + r.error());
  return record;
}

void add_record(RunLog& log, Record&& record) {
  struct Add {
    RunLog& log;
    void operator()(LogHeader&& h) const {
      if (!log.header) log.header = std::move(h);
    }
    void operator()(Sample&& s) const { log.samples.push_back(std::move(s)); }
    void operator()(Event&& e) const { log.events.push_back(std::move(e)); }
    void operator()(RunStart&& r) const { log.run_start = std::move(r); }
    void operator()(CacheDrop&& d) const { log.cache_drops.push_back(std::move(d)); }
    void operator()(LoadWindowEnd&& e) const { log.load_window_end = std::move(e); }
    void operator()(RunEnd&& r) const { log.run_end = std::move(r); }
    void operator()(UnknownRecord&&) const { ++log.unknown_lines; }
  };
  std::visit(Add{log}, std::move(record));
}

// One whole line; `where` is "watch.jsonl line 7".
// `source` line `number` as a record; a problem named "watch.jsonl line 12: ..." when it is none
// (the name is made only then: a long log has a million good lines).
void add_line(RunLog& log, const json& object, std::string_view source, size_t number) {
  auto record = record_of(object, Mode::kTolerant);
  if (record) {
    add_record(log, std::move(*record));
  } else {
    log.problems.push_back(fmt::format("{} line {}: {}", source, number, record.error().message));
  }
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<Record> parse_line(std::string_view line, Mode mode) {
  try {
    auto object = parse_object(line);
    if (!object) return fail("not a JSON object");
    return record_of(*object, mode);
  } catch (const std::exception& e) {
    return fail(std::string("unreadable line: ") + e.what());
  }
}

namespace detail {

// Cuts a log into lines as its bytes arrive, holding at most kLogMaxLineBytes of one line: a
// longer line (no line sparkdoc writes comes near it) is skipped to its end and counted, so a
// 1 GB file with no newline costs a scan, not a 1 GB string and a parse of it.
class LineReader {
 public:
  LineReader(RunLog& log, std::string_view source) : log_(log), source_(source) {}

  void feed(std::string_view bytes) {
    while (!bytes.empty()) {
      size_t end = bytes.find('\n');
      std::string_view piece = bytes.substr(0, end);
      if (!overlong_ && partial_.size() + piece.size() > kLogMaxLineBytes) {
        overlong_ = true;
        overlong_bytes_ = partial_.size();
        partial_.clear();
        partial_.shrink_to_fit();
      }
      if (overlong_) {
        overlong_bytes_ += piece.size();
      } else if (end != std::string_view::npos && partial_.empty()) {
        take(piece);  // the common case: a whole line inside the chunk, not copied
      } else {
        partial_.append(piece);
      }
      if (end == std::string_view::npos) return;
      if (overlong_) {
        ++number_;
        log_.problems.push_back(fmt::format("{} line {}: longer than {} bytes ({} bytes); skipped",
                                            source_, number_, kLogMaxLineBytes, overlong_bytes_));
        overlong_ = false;
        overlong_bytes_ = 0;
      } else if (!partial_.empty()) {
        take(partial_);
        partial_.clear();
      }
      bytes.remove_prefix(end + 1);
    }
  }

  // The end of the file: a last line without its newline.
  void finish() {
    if (overlong_) {
      // Too long to be a record, cut or not: named, and not taken for a line a kill -9 cut.
      log_.problems.push_back(
          fmt::format("{} line {}: longer than {} bytes ({} bytes, no newline "
                      "at the end); skipped",
                      source_, number_ + 1, kLogMaxLineBytes, overlong_bytes_));
    } else if (!partial_.empty()) {
      // Only a whole object counts.
      if (auto object = parse_object(partial_)) {
        add_line(log_, *object, source_, number_ + 1);
      } else {
        log_.truncated_bytes += partial_.size();
      }
    }
    partial_.clear();
    overlong_ = false;
    overlong_bytes_ = 0;
  }

 private:
  void take(std::string_view line) {
    ++number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    if (auto object = parse_object(line)) {
      add_line(log_, *object, source_, number_);
    } else {
      log_.problems.push_back(fmt::format("{} line {}: not a JSON object", source_, number_));
    }
  }

  RunLog& log_;
  std::string_view source_;
  std::string partial_;
  bool overlong_ = false;
  uint64_t overlong_bytes_ = 0;
  size_t number_ = 0;
};

}  // namespace detail

namespace {

using detail::LineReader;

// Reads a log file into `log` in chunks, up to kLogMaxBytes.
Result<void> read_log_file(RunLog& log, const std::string& path, std::string_view source) {
  auto fd = open_regular_file(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  LineReader lines(log, source);
  std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd->get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > kLogMaxBytes)
      return fail(fmt::format("{} is larger than {} bytes", path, kLogMaxBytes));
    lines.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  lines.finish();
  return {};
}

}  // namespace

void parse_log_into(RunLog& log, std::string_view text, std::string_view source) {
  LineReader lines(log, source);
  lines.feed(text);
  lines.finish();
}

void sort_by_time(RunLog& log) {
  std::stable_sort(log.samples.begin(), log.samples.end(),
                   [](const Sample& a, const Sample& b) { return a.ts < b.ts; });
  std::stable_sort(log.events.begin(), log.events.end(),
                   [](const Event& a, const Event& b) { return a.ts < b.ts; });
  std::stable_sort(log.cache_drops.begin(), log.cache_drops.end(),
                   [](const CacheDrop& a, const CacheDrop& b) { return a.ts < b.ts; });
}

RunLog parse_log(std::string_view text, std::string_view source) {
  RunLog log;
  parse_log_into(log, text, source);
  sort_by_time(log);
  return log;
}

bool holds_records(const RunLog& log) {
  return log.header || !log.samples.empty() || !log.events.empty() || log.run_start ||
         !log.cache_drops.empty() || log.load_window_end || log.run_end || log.unknown_lines > 0;
}

Result<RunLog> read_log(const std::string& path) {
  RunLog log;
  std::vector<std::string> files;
  if (is_dir(path)) {
    for (const char* name : {"watch.jsonl", "run.jsonl"}) {
      std::string p = path + "/" + name;
      if (exists(p)) files.push_back(p);
    }
    if (files.empty()) return fail(path + ": no watch.jsonl or run.jsonl in this folder");
  } else {
    files.push_back(path);
  }
  bool any = false;
  std::string last_error;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string source = base_name(files[i]);
    auto read = read_log_file(log, files[i], source);
    if (!read) {
      last_error = files[i] + ": " + read.error().message;
      log.problems.push_back(last_error);
      continue;
    }
    any = true;
    // A run log names its watch log; bring it in once.
    if (i + 1 == files.size() && files.size() == 1 && log.run_start && log.run_start->watch_log &&
        !log.run_start->watch_log->empty() && !log.header && log.samples.empty()) {
      std::string name = *log.run_start->watch_log;
      if (name.find('/') == std::string::npos) files.push_back(dir_name(files[i]) + "/" + name);
    }
  }
  if (!any) return fail(last_error);
  if (!holds_records(log)) {
    std::string why = log.problems.empty() ? std::string("empty") : log.problems.front();
    if (log.problems.size() > 1) why += fmt::format(", and {} more", log.problems.size() - 1);
    return fail(
        fmt::format("{}: no sparkdoc log records ({}); give the watch.jsonl of `sparkdoc "
                    "watch --log`, or the run.jsonl or folder of `sparkdoc run`",
                    path, why));
  }
  sort_by_time(log);
  return log;
}

LogFollower::LogFollower(std::string path)
    : path_(std::move(path)),
      source_(base_name(path_)),
      lines_(std::make_unique<LineReader>(log_, source_)) {}
LogFollower::~LogFollower() = default;

size_t LogFollower::poll() {
  auto fd = open_regular_file(path_);
  if (!fd) return 0;
  const size_t before = log_.samples.size() + log_.events.size();
  if (::lseek(fd->get(), static_cast<off_t>(offset_), SEEK_SET) >= 0) {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd->get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      offset_ += static_cast<uint64_t>(n);
      lines_->feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }
  return log_.samples.size() + log_.events.size() - before;
}

}  // namespace sparkdoc::runlog
