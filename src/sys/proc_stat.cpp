#include "sys/proc_stat.h"

#include <fmt/format.h>

#include <limits>

#include "core/strings.h"

namespace sparkdoc::sys {

Result<ProcStat> parse_proc_stat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return fail("/proc/PID/stat: no \"(comm)\"");
  }
  // After ") ": field 3 (state) is the first, field 22 (starttime) the twentieth.
  std::string_view rest = text.substr(close + 1);
  ProcStat out;
  size_t field = 3;
  size_t pos = 0;
  while (pos < rest.size()) {
    while (pos < rest.size() && (rest[pos] == ' ' || rest[pos] == '\n')) ++pos;
    if (pos >= rest.size()) break;
    size_t end = pos;
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\n') ++end;
    std::string_view value = rest.substr(pos, end - pos);
    if (field == 3) {
      if (value.size() != 1) return fail("/proc/PID/stat: the state is not one letter");
      out.state = value.front();
    } else if (field == 22) {
      auto ticks = parse_u64(value);
      if (!ticks) return fail("/proc/PID/stat: the start time is not a number");
      out.start_ticks = *ticks;
      return out;
    }
    ++field;
    pos = end;
  }
  return fail(fmt::format("/proc/PID/stat: {} fields, not the 22 or more of a process", field - 1));
}

Result<ProcStat> read_proc_stat(const Root& root, int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<int32_t>::max()) {
    return fail(Why::kAbsent, fmt::format("{} is not a process id", pid));
  }
  auto text = read_text(root.path(fmt::format("/proc/{}/stat", pid)), 4096);
  if (!text) return tl::unexpected(text.error());
  return parse_proc_stat(*text);
}

}  // namespace sparkdoc::sys
