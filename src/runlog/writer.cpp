#include "runlog/writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/time.h"
#include "runlog/fields.h"

namespace sparkdoc::runlog {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// watch.jsonl: the present fields of `value`, as `fields` lists them, into `out`.
template <class T, class Fields>
void put_fields(ordered_json& out, const T& value, Fields fields) {
  fields(value, [&](const char* key, const auto& field) {
    if (field) out[key] = *field;
  });
}

double round_ms(double ts) {
  return std::round(ts * 1000.0) / 1000.0;
}

// A watch record's start: its type and its time ("t" with milliseconds).
ordered_json watch_record(const char* type, double ts) {
  ordered_json j;
  j["type"] = type;
  j["t"] = format_iso8601_utc(ts, TimePrecision::kMillis);
  j["ts"] = round_ms(ts);
  return j;
}

template <class Json>
std::string dump(const Json& record) {
  return record.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// run.jsonl: every key written, a missing value as null; nlohmann::json sorts the keys.
json run_value(const std::string& text, NullWhenEmpty) {
  return text.empty() ? json() : json(text);
}
template <class T>
json run_value(const std::optional<T>& value) {
  return value ? json(*value) : json();
}
template <class T>
json run_value(const T& value);

template <class T, class Fields>
json run_object(const T& value, Fields fields) {
  json j = json::object();
  fields(value, [&](const char* key, const auto& field, auto... how) {
    j[key] = run_value(field, how...);
  });
  return j;
}
template <class T, class Fields>
json run_objects(const std::vector<T>& values, Fields fields) {
  json items = json::array();
  for (const T& value : values) items.push_back(run_object(value, fields));
  return items;
}

template <class T>
json run_value(const T& value) {
  if constexpr (std::is_same_v<T, std::vector<TunedValue>>) {
    return run_objects(value, TunedFields{});
  } else if constexpr (std::is_same_v<T, std::vector<RestoredItem>>) {
    return run_objects(value, RestoredFields{});
  } else {
    return json(value);
  }
}

// A run record: its fields, its type and its time ("t" in whole seconds).
template <class T, class Fields>
std::string run_line(const char* type, const T& record, Fields fields) {
  json j = run_object(record, fields);
  j["type"] = type;
  j["t"] = format_iso8601_utc(record.ts);
  j["ts"] = record.ts;
  return dump(j);
}

}  // namespace

std::string to_line(const LogHeader& h) {
  ordered_json j;
  j["type"] = "header";
  j["sparkdoc_version"] = h.sparkdoc_version;
  if (h.started_ts) {
    j["started"] = format_iso8601_utc(*h.started_ts, TimePrecision::kMillis);
    j["started_ts"] = round_ms(*h.started_ts);
  }
  if (h.interval_s) j["interval_s"] = *h.interval_s;
  j["host"] = h.host;
  j["platform"] = h.platform;
  j["platform_description"] = h.platform_description;
  j["unified_memory"] = h.unified_memory;
  if (h.driver_version) j["driver_version"] = *h.driver_version;
  j["gpus"] = ordered_json::array();
  for (const GpuInfo& g : h.gpus) {
    ordered_json info;
    info["index"] = g.index;
    put_fields(info, g, GpuInfoFields{});
    j["gpus"].push_back(std::move(info));
  }
  j["unavailable"] = ordered_json::array();
  for (const Unavailable& u : h.unavailable) {
    ordered_json item;
    if (u.gpu) item["gpu"] = *u.gpu;
    item["field"] = u.field;
    item["reason"] = u.reason;
    j["unavailable"].push_back(std::move(item));
  }
  return dump(j);
}

std::string to_line(const Sample& s) {
  ordered_json j = watch_record("sample", s.ts);
  j["gpus"] = ordered_json::array();
  for (const GpuSample& g : s.gpus) {
    ordered_json gpu;
    gpu["index"] = g.index;
    put_fields(gpu, g, GpuFields{});
    ordered_json counters = ordered_json::object();
    put_fields(counters, g.counters, CounterFields{});
    // Left out, as any value not read, in the samples between two readings of the counters.
    if (!counters.empty()) gpu["clock_event_counters_ns"] = std::move(counters);
    if (g.processes) {
      gpu["processes"] = ordered_json::array();
      for (const GpuProcessUse& p : *g.processes) {
        ordered_json process;
        process["pid"] = p.pid;
        put_fields(process, p, ProcessFields{});
        gpu["processes"].push_back(std::move(process));
      }
    }
    j["gpus"].push_back(std::move(gpu));
  }
  ordered_json mem = ordered_json::object();
  put_fields(mem, s.mem, MemoryFields{});
  j["mem"] = std::move(mem);
  if (!s.kernel.empty()) j["kernel"] = s.kernel;
  return dump(j);
}

std::string to_line(const Event& e) {
  ordered_json j = watch_record("event", e.ts);
  j["kind"] = e.kind;
  j["severity"] = severity_name(e.severity);
  if (e.gpu) j["gpu"] = *e.gpu;
  j["message"] = e.message;
  j["sample"] = e.sample;
  if (e.pid) j["pid"] = *e.pid;
  return dump(j);
}

std::string to_line(const RunStart& start) {
  return run_line("run_start", start, RunStartFields{});
}

std::string to_line(const CacheDrop& drop) {
  return run_line("cache_drop", drop, CacheDropFields{});
}

std::string to_line(const LoadWindowEnd& end) {
  return run_line("load_window_end", end, LoadWindowEndFields{});
}

std::string to_line(const RunEnd& end) {
  return run_line("run_end", end, RunEndFields{});
}

Result<LineFile> LineFile::create(const std::string& path, bool replace) {
  struct stat st {};
  if (!replace && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    return fail(
        fmt::format("{} already exists; pass --force to replace it, or name a new file", path));
  }
  auto fd = replace ? replace_file(path) : create_file(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  return LineFile(fd->release(), path);
}

LineFile::LineFile(LineFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

LineFile& LineFile::operator=(LineFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

LineFile::~LineFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> LineFile::write_line(std::string_view line) {
  if (fd_ < 0) return fail("write to a closed file");
  std::string buffer;
  buffer.reserve(line.size() + 1);
  buffer.append(line);
  buffer.push_back('\n');
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t n = ::write(fd_, buffer.data() + done, buffer.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  // Data only (not the inode's times): one journal commit a line at most. EINVAL means a file
  // that cannot be synced (a pipe, /dev/stdout), which is fine.
  if (::fdatasync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    return fail(fmt::format("cannot sync {}: {}", path_, std::strerror(errno)));
  }
  return {};
}

}  // namespace sparkdoc::runlog
