#include "watch/log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <exception>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/fs.h"
#include "core/time.h"

namespace sparkdoc::watch {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Each struct's optional fields, listed once for writing and reading: visit(key, member).
template <class Counters, class Visit>
void counter_fields(Counters& c, Visit&& visit) {
  visit("power", c.power);
  visit("thermal", c.thermal);
  visit("sync_boost", c.sync_boost);
  visit("board_limit", c.board_limit);
  visit("low_util", c.low_util);
  visit("reliability", c.reliability);
  visit("total_app_clocks", c.total_app_clocks);
  visit("total_base_clocks", c.total_base_clocks);
  visit("sw_thermal", c.sw_thermal);
  visit("hw_thermal", c.hw_thermal);
  visit("hw_power_brake", c.hw_power_brake);
}

template <class Gpu, class Visit>
void gpu_fields(Gpu& g, Visit&& visit) {
  visit("power_w", g.power_w);
  visit("temp_c", g.temp_c);
  visit("sm_clock_mhz", g.sm_clock_mhz);
  visit("mem_clock_mhz", g.mem_clock_mhz);
  visit("util_pct", g.util_pct);
  visit("mem_used_bytes", g.mem_used_bytes);
  visit("clock_event_reasons", g.clock_event_reasons);
  visit("energy_mj", g.energy_mj);
}

template <class Process, class Visit>
void process_fields(Process& p, Visit&& visit) {
  visit("name", p.name);
  visit("used_bytes", p.used_bytes);
}

template <class Memory, class Visit>
void memory_fields(Memory& m, Visit&& visit) {
  visit("total_bytes", m.total_bytes);
  visit("available_bytes", m.available_bytes);
  visit("cached_bytes", m.cached_bytes);
  visit("buffers_bytes", m.buffers_bytes);
  visit("shmem_bytes", m.shmem_bytes);
  visit("anon_bytes", m.anon_bytes);
  visit("swap_total_bytes", m.swap_total_bytes);
  visit("swap_used_bytes", m.swap_used_bytes);
  visit("psi_some_avg10", m.psi_some_avg10);
  visit("psi_full_avg10", m.psi_full_avg10);
}

template <class Info, class Visit>
void gpu_info_fields(Info& g, Visit&& visit) {
  visit("name", g.name);
  visit("uuid", g.uuid);
  visit("pci_bus_id", g.pci_bus_id);
  visit("power_limit_w", g.power_limit_w);
}

// Writes the present fields of `value` (as listed by `fields`) into `out`.
template <class T, class Fields>
void put_fields(ordered_json& out, const T& value, Fields fields) {
  fields(value, [&](const char* key, const auto& field) {
    if (field) out[key] = *field;
  });
}

double round_ms(double ts) {
  return std::round(ts * 1000.0) / 1000.0;
}

// Reading back: the first problem found, so a bad line is reported with its key.
class Reader {
 public:
  template <class T>
  void optional(const json& object, const char* key, std::optional<T>& out) {
    out.reset();
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!fits<T>(*it)) {
      complain(key);
      return;
    }
    out = it->template get<T>();
  }

  template <class T>
  void required(const json& object, const char* key, T& out) {
    auto it = object.find(key);
    if (it == object.end() || !fits<T>(*it)) {
      complain(key);
      return;
    }
    out = it->template get<T>();
  }

  // The array under `key` (absent or null reads as none), each element read by `each`.
  template <class Each>
  void array(const json& object, const char* key, Each each) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!it->is_array()) {
      complain(key);
      return;
    }
    for (const json& element : *it) {
      if (!element.is_object()) {
        complain(key);
        return;
      }
      each(element);
    }
  }

  const json* object(const json& parent, const char* key) {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return nullptr;
    if (!it->is_object()) {
      complain(key);
      return nullptr;
    }
    return &*it;
  }

  template <class T, class Fields>
  void fields(const json& object, T& value, Fields fields) {
    fields(value, [&](const char* key, auto& field) { optional(object, key, field); });
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  template <class T>
  static bool fits(const json& j) {
    if constexpr (std::is_same_v<T, std::string>) {
      return j.is_string();
    } else if constexpr (std::is_same_v<T, bool>) {
      return j.is_boolean();
    } else if constexpr (std::is_floating_point_v<T>) {
      return j.is_number();
    } else if constexpr (std::is_unsigned_v<T>) {
      if (!j.is_number_unsigned()) return false;
      return j.get<uint64_t>() <= std::numeric_limits<T>::max();
    } else {
      return j.is_number_integer();
    }
  }

  void complain(const char* key) {
    if (error_.empty()) error_ = fmt::format("\"{}\" has the wrong type", key);
  }

  std::string error_;
};

// A string the writer always sets; absent reads as empty.
std::string text_or_empty(const json& j, const char* key, Reader& r) {
  std::optional<std::string> value;
  r.optional(j, key, value);
  return value.value_or("");
}

Header read_header(const json& j, Reader& r) {
  Header h;
  h.sparkdoc_version = text_or_empty(j, "sparkdoc_version", r);
  std::optional<double> started_ts;
  r.optional(j, "started_ts", started_ts);
  h.started_ts = started_ts.value_or(0);
  r.required(j, "interval_s", h.interval_s);
  h.host = text_or_empty(j, "host", r);
  h.platform = text_or_empty(j, "platform", r);
  h.platform_description = text_or_empty(j, "platform_description", r);
  std::optional<bool> unified;
  r.optional(j, "unified_memory", unified);
  h.unified_memory = unified.value_or(false);
  r.optional(j, "driver_version", h.driver_version);
  r.array(j, "gpus", [&](const json& g) {
    GpuInfo info;
    r.required(g, "index", info.index);
    r.fields(g, info, [](auto& v, auto&& visit) { gpu_info_fields(v, visit); });
    h.gpus.push_back(std::move(info));
  });
  r.array(j, "unavailable", [&](const json& u) {
    Unavailable item;
    r.optional(u, "gpu", item.gpu);
    r.required(u, "field", item.field);
    r.required(u, "reason", item.reason);
    h.unavailable.push_back(std::move(item));
  });
  return h;
}

Sample read_sample(const json& j, Reader& r) {
  Sample s;
  r.required(j, "ts", s.ts);
  r.array(j, "gpus", [&](const json& g) {
    GpuSample gpu;
    r.required(g, "index", gpu.index);
    r.fields(g, gpu, [](auto& v, auto&& visit) { gpu_fields(v, visit); });
    if (const json* counters = r.object(g, "clock_event_counters_ns")) {
      r.fields(*counters, gpu.counters, [](auto& v, auto&& visit) { counter_fields(v, visit); });
    }
    if (g.contains("processes") && !g["processes"].is_null()) {
      gpu.processes.emplace();
      r.array(g, "processes", [&](const json& p) {
        GpuProcessUse use;
        r.required(p, "pid", use.pid);
        r.fields(p, use, [](auto& v, auto&& visit) { process_fields(v, visit); });
        gpu.processes->push_back(std::move(use));
      });
    }
    s.gpus.push_back(std::move(gpu));
  });
  if (const json* mem = r.object(j, "mem")) {
    r.fields(*mem, s.mem, [](auto& v, auto&& visit) { memory_fields(v, visit); });
  }
  return s;
}

Event read_event(const json& j, Reader& r) {
  Event e;
  r.required(j, "ts", e.ts);
  r.required(j, "kind", e.kind);
  std::string severity;
  r.required(j, "severity", severity);
  e.severity = severity == "warn" ? Severity::kWarn : Severity::kInfo;
  r.optional(j, "gpu", e.gpu);
  r.required(j, "message", e.message);
  std::optional<uint64_t> sample;
  r.optional(j, "sample", sample);
  e.sample = static_cast<size_t>(sample.value_or(0));
  r.optional(j, "pid", e.pid);
  return e;
}

}  // namespace

std::string_view severity_name(Severity severity) {
  return severity == Severity::kWarn ? "warn" : "info";
}

ordered_json header_to_json(const Header& h) {
  ordered_json j;
  j["type"] = "header";
  j["sparkdoc_version"] = h.sparkdoc_version;
  j["started"] = format_iso8601_utc(h.started_ts, TimePrecision::kMillis);
  j["started_ts"] = round_ms(h.started_ts);
  j["interval_s"] = h.interval_s;
  j["host"] = h.host;
  j["platform"] = h.platform;
  j["platform_description"] = h.platform_description;
  j["unified_memory"] = h.unified_memory;
  if (h.driver_version) j["driver_version"] = *h.driver_version;
  j["gpus"] = ordered_json::array();
  for (const GpuInfo& g : h.gpus) {
    ordered_json info;
    info["index"] = g.index;
    put_fields(info, g, [](const auto& v, auto&& visit) { gpu_info_fields(v, visit); });
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
  return j;
}

ordered_json sample_to_json(const Sample& s) {
  ordered_json j;
  j["type"] = "sample";
  j["t"] = format_iso8601_utc(s.ts, TimePrecision::kMillis);
  j["ts"] = round_ms(s.ts);
  j["gpus"] = ordered_json::array();
  for (const GpuSample& g : s.gpus) {
    ordered_json gpu;
    gpu["index"] = g.index;
    put_fields(gpu, g, [](const auto& v, auto&& visit) { gpu_fields(v, visit); });
    ordered_json counters = ordered_json::object();
    put_fields(counters, g.counters, [](const auto& v, auto&& visit) { counter_fields(v, visit); });
    // Left out, as any value not read, in the samples between two readings of the counters.
    if (!counters.empty()) gpu["clock_event_counters_ns"] = std::move(counters);
    if (g.processes) {
      gpu["processes"] = ordered_json::array();
      for (const GpuProcessUse& p : *g.processes) {
        ordered_json process;
        process["pid"] = p.pid;
        put_fields(process, p, [](const auto& v, auto&& visit) { process_fields(v, visit); });
        gpu["processes"].push_back(std::move(process));
      }
    }
    j["gpus"].push_back(std::move(gpu));
  }
  ordered_json mem = ordered_json::object();
  put_fields(mem, s.mem, [](const auto& v, auto&& visit) { memory_fields(v, visit); });
  j["mem"] = std::move(mem);
  return j;
}

ordered_json event_to_json(const Event& e) {
  ordered_json j;
  j["type"] = "event";
  j["t"] = format_iso8601_utc(e.ts, TimePrecision::kMillis);
  j["ts"] = round_ms(e.ts);
  j["kind"] = e.kind;
  j["severity"] = severity_name(e.severity);
  if (e.gpu) j["gpu"] = *e.gpu;
  j["message"] = e.message;
  j["sample"] = e.sample;
  if (e.pid) j["pid"] = *e.pid;
  return j;
}

Result<Record> parse_log_line(std::string_view line) {
  try {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) return fail("not JSON");
    if (!j.is_object()) return fail("not a JSON object");
    auto type = j.find("type");
    if (type == j.end() || !type->is_string()) return fail("no \"type\"");
    const std::string& kind = type->get_ref<const std::string&>();
    Reader r;
    Record record;
    if (kind == "header") {
      record = read_header(j, r);
    } else if (kind == "sample") {
      record = read_sample(j, r);
    } else if (kind == "event") {
      record = read_event(j, r);
    } else {
      return fail(fmt::format("unknown record type \"{}\"", kind));
    }
    if (!r.ok()) return fail(kind + ": " + r.error());
    return record;
  } catch (const std::exception& e) {
    return fail(std::string("unreadable line: ") + e.what());
  }
}

std::string dump_line(const ordered_json& record) {
  return record.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
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

}  // namespace sparkdoc::watch
