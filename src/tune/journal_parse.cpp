// tune/journal.h: journal text read back, line by line. Pure.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "sys/text.h"
#include "tune/journal.h"

namespace sparkdoc::tune {
namespace {

using nlohmann::json;

const json* member(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<std::string> string_member(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> int_member(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

// One whole line: what it records, or why it is damaged.
struct ParsedLine {
  std::optional<JournalSession> session;
  std::optional<ValueChange> change;
  std::optional<SwapOffRecord> swap;
  std::optional<GpuClocksRecord> clocks;
  struct Command {
    int64_t pid = 0;
    uint64_t start_ticks = 0;
    std::string name;
  };
  std::optional<Command> command;
  std::string problem;
};

// A clock in MHz as a journal records it: an integer within what any GPU has.
std::optional<unsigned> mhz_member(const json& j, const char* key) {
  auto v = int_member(j, key);
  if (!v || *v < 0 || *v > 100000) return std::nullopt;
  return static_cast<unsigned>(*v);
}

// NVML's UUIDs are "GPU-" and hex digits with dashes, within its 96-byte buffer.
bool plausible_uuid(const std::string& uuid) {
  if (uuid.empty() || uuid.size() >= 96) return false;
  return std::all_of(uuid.begin(), uuid.end(),
                     [](char c) { return c > ' ' && c < 0x7f && c != '"' && c != '\\'; });
}

std::optional<GpuClocksRecord> parse_gpu_clocks(const json& j, size_t number,
                                                std::string& problem) {
  auto uuid = string_member(j, "uuid");
  auto min = mhz_member(j, "min_mhz");
  auto max = mhz_member(j, "max_mhz");
  if (!uuid || !plausible_uuid(*uuid) || !min || !max) {
    problem =
        fmt::format("line {}: \"gpu_clocks\" needs a GPU's uuid, min_mhz and max_mhz", number);
    return std::nullopt;
  }
  GpuClocksRecord r{number, *uuid, string_member(j, "name").value_or(""),
                    *min,   *max,  mhz_member(j, "gpu_max_mhz")};
  return r;
}

ParsedLine parse_line(std::string_view text, size_t number) {
  ParsedLine out;
  if (text.size() > kJournalMaxLineBytes) {
    out.problem = fmt::format("line {}: longer than {} bytes", number, kJournalMaxLineBytes);
    return out;
  }
  if (text.empty() || text.front() != '{') {
    out.problem = fmt::format("line {}: not a JSON object", number);
    return out;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.problem = fmt::format("line {}: not a JSON object", number);
    return out;
  }
  auto op = string_member(j, "op");
  if (!op) {
    out.problem = fmt::format("line {}: no \"op\"", number);
    return out;
  }
  if (*op == "begin") {
    auto version = int_member(j, "sparkdoc_journal");
    if (!version) {
      out.problem = fmt::format("line {}: \"begin\" without a version", number);
      return out;
    }
    JournalSession s;
    s.line = number;
    s.version = static_cast<int>(std::clamp<int64_t>(*version, -1, 1 << 20));
    s.pid = int_member(j, "pid").value_or(0);
    s.started_at = string_member(j, "started_at").value_or("");
    s.command = string_member(j, "command").value_or("");
    out.session = std::move(s);
    return out;
  }
  if (*op == "set") {
    auto path = string_member(j, "path");
    auto old_value = string_member(j, "old");
    auto new_value = string_member(j, "new");
    if (!path || !old_value || !new_value) {
      out.problem = fmt::format("line {}: \"set\" needs path, old and new as strings", number);
      return out;
    }
    out.change = ValueChange{number, *path, *old_value, *new_value};
    return out;
  }
  if (*op == "swapoff") {
    auto path = string_member(j, "path");
    auto priority = int_member(j, "priority");
    if (!path || !priority || *priority < -(1 << 20) || *priority > (1 << 20)) {
      out.problem = fmt::format("line {}: \"swapoff\" needs path and priority", number);
      return out;
    }
    out.swap = SwapOffRecord{number, *path, static_cast<int>(*priority)};
    return out;
  }
  if (*op == "gpu_clocks") {
    out.clocks = parse_gpu_clocks(j, number, out.problem);
    return out;
  }
  if (*op == "command") {
    auto pid = int_member(j, "pid");
    auto ticks = int_member(j, "start_ticks");
    auto name = string_member(j, "name");
    if (!pid || *pid <= 0 || !ticks || *ticks <= 0 || !name) {
      out.problem =
          fmt::format("line {}: \"command\" needs a pid, its start_ticks and a name", number);
      return out;
    }
    out.command = ParsedLine::Command{*pid, static_cast<uint64_t>(*ticks), *name};
    return out;
  }
  out.problem = fmt::format("line {}: unknown op \"{}\"", number, sys::valid_utf8(*op));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> JournalContents::originals() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : changes) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o.first == c.path;
    if (!seen) out.emplace_back(c.path, c.old_value);
  }
  return out;
}

std::vector<SwapOffRecord> JournalContents::swap_areas() const {
  std::vector<SwapOffRecord> out;
  for (const auto& s : swaps_off) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o.path == s.path;
    if (!seen) out.push_back(s);
  }
  return out;
}

std::vector<GpuClocksRecord> JournalContents::clocked_gpus() const {
  std::vector<GpuClocksRecord> out;
  for (const auto& g : gpu_clocks) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o.uuid == g.uuid;
    if (!seen) out.push_back(g);
  }
  return out;
}

Result<JournalContents> parse_journal(std::string_view text) {
  try {
    if (text.size() > kJournalMaxBytes) {
      return fail(
          fmt::format("journal of {} bytes is too large to be a sparkdoc journal", text.size()));
    }
    JournalContents c;
    bool in_skipped_session = false;  // after a "begin" of another version
    size_t number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) {
        c.truncated_bytes = text.size() - pos;
        break;
      }
      std::string_view line = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++number;
      ParsedLine parsed = parse_line(line, number);
      if (number == 1) {
        // Whole lines are never damaged by a crash: a bad first line is not our file.
        if (!parsed.session) {
          return fail(parsed.problem.empty()
                          ? std::string("not a sparkdoc journal: the first line is not \"begin\"")
                          : "not a sparkdoc journal: " + parsed.problem);
        }
      }
      if (parsed.session && parsed.session->version != kJournalVersion) {
        if (number == 1) {
          return fail(
              fmt::format("journal version {} is not {} (written by another sparkdoc "
                          "version)",
                          parsed.session->version, kJournalVersion));
        }
        c.problems.push_back(
            fmt::format("line {}: journal version {}", number, parsed.session->version));
        in_skipped_session = true;
        continue;
      }
      if (parsed.session) {
        c.sessions.push_back(std::move(*parsed.session));
        in_skipped_session = false;
      }
      if (parsed.change) c.changes.push_back(std::move(*parsed.change));
      if (parsed.swap) c.swaps_off.push_back(std::move(*parsed.swap));
      if (parsed.clocks) c.gpu_clocks.push_back(std::move(*parsed.clocks));
      if (parsed.command && in_skipped_session) {
        // Another version's session: its command is not one of the sessions read.
        c.problems.push_back(fmt::format("line {}: \"command\" of a session not read", number));
      } else if (parsed.command) {  // belongs to the session it follows; line 1 is always one
        c.sessions.back().command_pid = parsed.command->pid;
        c.sessions.back().command_start_ticks = parsed.command->start_ticks;
        c.sessions.back().command_name = std::move(parsed.command->name);
      }
      if (!parsed.problem.empty()) c.problems.push_back(std::move(parsed.problem));
    }
    return c;
  } catch (const std::exception& e) {
    return fail(fmt::format("journal: {}", e.what()));
  }
}

}  // namespace sparkdoc::tune
