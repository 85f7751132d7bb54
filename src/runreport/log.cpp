#include "runreport/log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/time.h"

namespace sparkdoc::runreport {
namespace {

using nlohmann::json;

// Lenient field access: a value of the wrong type, null, or absent reads as nullopt.
const json* field(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> opt_double(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<uint64_t> opt_u64(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  if (v->is_number_integer()) {
    int64_t i = v->get<int64_t>();
    if (i < 0) return std::nullopt;
    return static_cast<uint64_t>(i);
  }
  double d = v->get<double>();
  if (!std::isfinite(d) || d < 0 || d >= 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(d));
}

std::optional<int64_t> opt_i64(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<int> opt_int(const json& j, std::string_view key) {
  auto v = opt_i64(j, key);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::string str(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (v == nullptr || !v->is_string()) return "";
  return v->get<std::string>();
}

std::optional<std::string> opt_str(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

bool flag(const json& j, std::string_view key) {
  const json* v = field(j, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

std::vector<std::string> strings(const json& j, std::string_view key) {
  std::vector<std::string> out;
  const json* v = field(j, key);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& e : *v) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

// The time of a line: "ts" when it is a number, else "t" parsed. Times outside 1970 to the
// year 5138 are not a clock's: the line has no usable time.
std::optional<double> line_time(const json& j) {
  constexpr double kLatest = 1e11;
  std::optional<double> ts = opt_double(j, "ts");
  if (!ts) {
    if (auto t = opt_str(j, "t")) ts = parse_iso8601_utc(*t);
  }
  if (!ts || *ts < 0 || *ts > kLatest) return std::nullopt;
  return ts;
}

LogHeader header_of(const json& j) {
  LogHeader h;
  h.sparkdoc_version = str(j, "sparkdoc_version");
  h.started = str(j, "started");
  h.interval_s = opt_double(j, "interval_s");
  h.host = str(j, "host");
  h.platform = str(j, "platform");
  h.platform_description = str(j, "platform_description");
  h.driver_version = str(j, "driver_version");
  if (const json* gpus = field(j, "gpus"); gpus && gpus->is_array()) {
    for (const auto& g : *gpus) {
      if (!g.is_object()) continue;
      GpuInfo info;
      info.index = opt_int(g, "index").value_or(static_cast<int>(h.gpus.size()));
      info.name = str(g, "name");
      info.uuid = str(g, "uuid");
      info.power_limit_w = opt_double(g, "power_limit_w");
      h.gpus.push_back(std::move(info));
    }
  }
  return h;
}

GpuSample gpu_sample_of(const json& g, size_t position) {
  GpuSample s;
  s.index = opt_int(g, "index").value_or(static_cast<int>(position));
  s.power_w = opt_double(g, "power_w");
  s.temp_c = opt_double(g, "temp_c");
  s.sm_clock_mhz = opt_double(g, "sm_clock_mhz");
  s.mem_clock_mhz = opt_double(g, "mem_clock_mhz");
  s.util_pct = opt_double(g, "util_pct");
  s.mem_used_bytes = opt_u64(g, "mem_used_bytes");
  s.clock_event_reasons = opt_u64(g, "clock_event_reasons");
  if (const json* c = field(g, "clock_event_counters_ns"); c && c->is_object()) {
    for (auto it = c->begin(); it != c->end(); ++it) {
      if (auto v = opt_u64(*c, it.key())) s.clock_event_counters_ns.emplace(it.key(), *v);
    }
  }
  if (const json* p = field(g, "processes"); p && p->is_array()) {
    std::vector<ProcessSample> procs;
    for (const auto& e : *p) {
      if (!e.is_object()) continue;
      auto pid = opt_i64(e, "pid");
      if (!pid) continue;
      procs.push_back(ProcessSample{*pid, str(e, "name"), opt_u64(e, "used_bytes")});
    }
    s.processes = std::move(procs);
  }
  return s;
}

MemSample mem_sample_of(const json& m) {
  MemSample s;
  s.total_bytes = opt_u64(m, "total_bytes");
  s.available_bytes = opt_u64(m, "available_bytes");
  s.cached_bytes = opt_u64(m, "cached_bytes");
  s.anon_bytes = opt_u64(m, "anon_bytes");
  s.swap_used_bytes = opt_u64(m, "swap_used_bytes");
  s.psi_some_avg10 = opt_double(m, "psi_some_avg10");
  s.psi_full_avg10 = opt_double(m, "psi_full_avg10");
  return s;
}

RunStart run_start_of(const json& j, double ts) {
  RunStart r;
  r.t = str(j, "t");
  r.ts = ts;
  r.sparkdoc_version = str(j, "sparkdoc_version");
  r.host = str(j, "host");
  r.pid = opt_i64(j, "pid").value_or(0);
  r.child_pid = opt_i64(j, "child_pid").value_or(0);
  r.argv = strings(j, "argv");
  r.cwd = str(j, "cwd");
  r.env_removed = strings(j, "env_removed");
  if (const json* e = field(j, "env_set"); e && e->is_object()) {
    for (auto it = e->begin(); it != e->end(); ++it) {
      if (it->is_string()) r.env_set.emplace(it.key(), it->get<std::string>());
    }
  }
  r.distributed = flag(j, "distributed");
  r.watch_log = opt_str(j, "watch_log");
  r.telemetry = str(j, "telemetry");
  r.preflight = str(j, "preflight");
  r.oom_score_adj = opt_int(j, "oom_score_adj");
  r.io_priority = str(j, "io_priority");
  if (const json* t = field(j, "tuned"); t && t->is_array()) {
    for (const auto& e : *t) {
      if (e.is_object()) r.tuned.push_back({str(e, "path"), str(e, "old"), str(e, "new")});
    }
  }
  r.drop_cache_every_s = opt_double(j, "drop_cache_every_s");
  r.drop_cache_for_s = opt_double(j, "drop_cache_for_s");
  return r;
}

RunEnd run_end_of(const json& j, double ts) {
  RunEnd r;
  r.t = str(j, "t");
  r.ts = ts;
  r.exit_status = opt_int(j, "exit_status").value_or(0);
  r.exit_code = opt_int(j, "exit_code");
  r.signal = opt_str(j, "signal");
  r.core_dumped = flag(j, "core_dumped");
  r.duration_s = opt_double(j, "duration_s").value_or(0);
  r.signals_forwarded = strings(j, "signals_forwarded");
  if (const json* a = field(j, "restored"); a && a->is_array()) {
    for (const auto& e : *a) {
      if (e.is_object()) {
        r.restored.push_back({str(e, "path"), str(e, "value"), flag(e, "ok"), str(e, "error")});
      }
    }
  }
  r.notes = strings(j, "notes");
  return r;
}

// One whole line; `where` is "watch.jsonl line 7".
void parse_line(RunLog& log, std::string_view line, const std::string& where) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    log.problems.push_back(where + ": not a JSON object");
    return;
  }
  std::string type = str(j, "type");
  if (type == "header") {
    if (!log.header) log.header = header_of(j);
    return;
  }
  bool timed = type == "sample" || type == "event" || type == "run_start" || type == "cache_drop" ||
               type == "load_window_end" || type == "run_end";
  if (!timed) {
    ++log.unknown_lines;
    return;
  }
  auto ts = line_time(j);
  if (!ts) {
    log.problems.push_back(where + ": " + type + " without a time (ts or t)");
    return;
  }
  std::string t = str(j, "t");
  if (t.empty()) t = format_iso8601_utc(*ts);
  if (type == "sample") {
    Sample s;
    s.t = t;
    s.ts = *ts;
    if (const json* gpus = field(j, "gpus"); gpus && gpus->is_array()) {
      for (const auto& g : *gpus) {
        if (g.is_object()) s.gpus.push_back(gpu_sample_of(g, s.gpus.size()));
      }
    }
    if (const json* m = field(j, "mem"); m && m->is_object()) s.mem = mem_sample_of(*m);
    log.samples.push_back(std::move(s));
  } else if (type == "event") {
    log.events.push_back(
        Event{t, *ts, str(j, "kind"), str(j, "severity"), opt_int(j, "gpu"), str(j, "message")});
  } else if (type == "run_start") {
    RunStart r = run_start_of(j, *ts);
    r.t = t;
    log.run_start = std::move(r);
  } else if (type == "cache_drop") {
    log.cache_drops.push_back(CacheDrop{t, *ts, flag(j, "ok"), str(j, "error")});
  } else if (type == "load_window_end") {
    log.load_window_end = LoadWindowEnd{t, *ts, str(j, "reason")};
  } else {
    RunEnd r = run_end_of(j, *ts);
    r.t = t;
    log.run_end = std::move(r);
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

void parse_log_into(RunLog& log, std::string_view text, std::string_view source) {
  size_t start = 0;
  size_t number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    ++number;
    std::string where = fmt::format("{} line {}", source, number);
    if (end == std::string_view::npos) {
      std::string_view last = text.substr(start);
      // A kill -9 can cut a line anywhere; only a whole object counts.
      json j = json::parse(last, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        log.truncated_bytes += last.size();
      } else {
        parse_line(log, last, where);
      }
      break;
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) parse_line(log, line, where);
    start = end + 1;
  }
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
    auto text = read_text(files[i], kLogMaxBytes);
    if (!text) {
      last_error = files[i] + ": " + text.error().message;
      log.problems.push_back(last_error);
      continue;
    }
    any = true;
    parse_log_into(log, *text, base_name(files[i]));
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
    return fail(fmt::format("{}: no sparkdoc log records ({}); give the watch.jsonl of `sparkdoc "
                            "watch --log`, or the run.jsonl or folder of `sparkdoc run`",
                            path, why));
  }
  sort_by_time(log);
  return log;
}

bool holds_records(const RunLog& log) {
  return log.header || !log.samples.empty() || !log.events.empty() || log.run_start ||
         !log.cache_drops.empty() || log.load_window_end || log.run_end || log.unknown_lines > 0;
}

std::string run_start_line(const RunStart& r) {
  json tuned = json::array();
  for (const auto& v : r.tuned)
    tuned.push_back({{"path", v.path}, {"old", v.old_value}, {"new", v.new_value}});
  json j = {{"type", "run_start"},
            {"t", r.t},
            {"ts", r.ts},
            {"sparkdoc_version", r.sparkdoc_version},
            {"host", r.host},
            {"pid", r.pid},
            {"child_pid", r.child_pid},
            {"argv", r.argv},
            {"cwd", r.cwd},
            {"env_removed", r.env_removed},
            {"env_set", r.env_set},
            {"distributed", r.distributed},
            {"watch_log", r.watch_log ? json(*r.watch_log) : json()},
            {"telemetry", r.telemetry},
            {"preflight", r.preflight},
            {"oom_score_adj", r.oom_score_adj ? json(*r.oom_score_adj) : json()},
            {"io_priority", r.io_priority},
            {"tuned", tuned},
            {"drop_cache_every_s", r.drop_cache_every_s ? json(*r.drop_cache_every_s) : json()},
            {"drop_cache_for_s", r.drop_cache_for_s ? json(*r.drop_cache_for_s) : json()}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string cache_drop_line(const CacheDrop& d) {
  json j = {{"type", "cache_drop"},
            {"t", d.t},
            {"ts", d.ts},
            {"ok", d.ok},
            {"error", d.error.empty() ? json() : json(d.error)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string load_window_end_line(const LoadWindowEnd& e) {
  json j = {{"type", "load_window_end"}, {"t", e.t}, {"ts", e.ts}, {"reason", e.reason}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string run_end_line(const RunEnd& r) {
  json restored = json::array();
  for (const auto& v : r.restored) {
    restored.push_back({{"path", v.path},
                        {"value", v.value},
                        {"ok", v.ok},
                        {"error", v.error.empty() ? json() : json(v.error)}});
  }
  json j = {{"type", "run_end"},
            {"t", r.t},
            {"ts", r.ts},
            {"exit_status", r.exit_status},
            {"exit_code", r.exit_code ? json(*r.exit_code) : json()},
            {"signal", r.signal ? json(*r.signal) : json()},
            {"core_dumped", r.core_dumped},
            {"duration_s", r.duration_s},
            {"signals_forwarded", r.signals_forwarded},
            {"restored", restored},
            {"notes", r.notes}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

size_t LogFollower::poll() {
  auto fd = open_regular_file(path_);
  if (!fd) return 0;
  std::string added;
  if (::lseek(fd->get(), static_cast<off_t>(offset_), SEEK_SET) >= 0) {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd->get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      added.append(buf, static_cast<size_t>(n));
    }
  }
  offset_ += added.size();
  partial_ += added;
  size_t last_newline = partial_.rfind('\n');
  if (last_newline == std::string::npos) return 0;
  std::string complete = partial_.substr(0, last_newline + 1);
  partial_.erase(0, last_newline + 1);
  size_t before = log_.samples.size() + log_.events.size();
  parse_log_into(log_, complete, base_name(path_));
  return log_.samples.size() + log_.events.size() - before;
}

}  // namespace sparkdoc::runreport
