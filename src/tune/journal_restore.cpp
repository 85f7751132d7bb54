// tune/journal.h: `clean --restore`, and a run's own restore: every journaled value written
// back, swap areas turned on again, GPU clocks reset.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "core/strings.h"
#include "sys/text.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"
#include "tune/journal_file.h"
#include "tune/tunables.h"

namespace sparkdoc::tune {

using detail::check_journal_file;
using detail::errno_text;
using detail::fsync_dir;
using detail::lock;
using detail::parent_of;

namespace {

RestoredValue restore_value(const Root& root, const std::string& path,
                            const std::string& original) {
  RestoredValue v;
  v.path = path;
  v.original = original;
  const TunableInfo* tunable = find_tunable(path);
  auto value = parse_i64(trim(original));
  if (tunable == nullptr) {
    v.error = "not on the list of values sparkdoc changes; left alone";
  } else if (!tunable->setting) {
    v.error = "an action, not a setting: nothing to restore; left alone";
  } else if (!value) {
    v.error = fmt::format("recorded value \"{}\" is not an integer; left alone",
                          sys::valid_utf8(original));
  } else if (*value < tunable->restore_min || *value > tunable->restore_max) {
    v.error = fmt::format(
        "recorded value {} is outside {}..{}, not one a machine had; left alone (set it by "
        "hand if it is right: sysctl vm.{}=VALUE)",
        *value, tunable->restore_min, tunable->restore_max, tunable->name);
  } else {
    if (auto before = read_tunable(root, tunable->id)) v.before = std::to_string(*before);
    auto written = write_tunable(root, tunable->id, *value);
    if (written) {
      v.restored = true;
    } else {
      v.error = written.error().message;
    }
  }
  return v;
}

RestoredSwap restore_swap(const SwapOffRecord& record,
                          const Result<std::vector<sys::SwapArea>>& active, SwapControl& swap) {
  RestoredSwap s;
  s.path = record.path;
  s.priority = record.priority;
  if (record.path.empty() || record.path.front() != '/') {
    s.error = "not an absolute path; left alone";
    return s;
  }
  if (active) {
    for (const auto& area : *active) s.was_on = s.was_on || area.path == record.path;
  }
  if (s.was_on) {
    s.restored = true;
  } else if (auto on = swap.swap_on(record.path, record.priority)) {
    s.restored = true;
  } else {
    s.error = on.error().message;
  }
  return s;
}

// A reset whatever the lock was: NVML cannot read one back (tune/gpu_clocks.h).
RestoredClocks restore_clocks(const GpuClocksRecord& record, GpuClockControl& clocks) {
  RestoredClocks c;
  c.uuid = record.uuid;
  c.name = record.name;
  auto reset = clocks.reset(record.uuid);
  if (reset) {
    c.restored = true;
  } else if (reset.error().why == Why::kAbsent) {
    c.error = reset.error().message +
              "; a reboot resets locked clocks anyway: once this GPU is gone for good, remove "
              "the journal by hand";
  } else {
    c.error = reset.error().message;
  }
  return c;
}

}  // namespace

bool RestoreReport::complete() const {
  return !found || removed;
}

Result<RestoreReport> restore_journal(const JournalLocation& location, const Root& root,
                                      unsigned euid, SwapControl& swap) {
  auto clocks = gpu_clock_control(root);
  return restore_journal(location, root, euid, swap, *clocks);
}

Result<RestoreReport> restore_journal(const JournalLocation& location, const Root& root,
                                      unsigned euid, SwapControl& swap, GpuClockControl& clocks) {
  RestoreReport report;
  report.location = location;
  int fd = ::open(location.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return report;
    if (err == ELOOP) {
      return fail(fmt::format("{} is a symbolic link; refusing to read the journal through it",
                              location.path));
    }
    return fail(why_from_errno(err),
                fmt::format("cannot open {}: {}", location.path, errno_text(err)));
  }
  report.found = true;
  // The descriptor is closed on every path below; the lock goes with it.
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (auto checked = check_journal_file(fd, location.path, euid); !checked) {
    return tl::unexpected(checked.error());
  }
  if (auto locked = lock(fd, location.path); !locked) return tl::unexpected(locked.error());

  auto text = detail::read_journal_fd(fd, location.path);
  if (!text) return tl::unexpected(text.error());
  auto contents = parse_journal(*text);
  if (!contents) {
    return fail(fmt::format("{}: {}", location.path, contents.error().message));
  }
  report.problems = contents->problems;
  report.truncated_bytes = contents->truncated_bytes;

  for (const auto& [path, original] : contents->originals()) {
    RestoredValue v = restore_value(root, path, original);
    if (!v.restored) {
      report.problems.push_back(fmt::format("{}: {}", sys::valid_utf8(path), v.error));
    }
    report.values.push_back(std::move(v));
  }
  auto active = swap.active();
  for (const auto& record : contents->swap_areas()) {
    RestoredSwap s = restore_swap(record, active, swap);
    if (!s.restored) {
      report.problems.push_back(fmt::format("{}: {}", sys::valid_utf8(record.path), s.error));
    }
    report.swaps.push_back(std::move(s));
  }
  for (const auto& record : contents->clocked_gpus()) {
    RestoredClocks c = restore_clocks(record, clocks);
    if (!c.restored) {
      report.problems.push_back(fmt::format("{}: clocks not reset: {}", record.uuid, c.error));
    }
    report.gpu_clocks.push_back(std::move(c));
  }

  if (report.problems.empty()) {
    if (::unlink(location.path.c_str()) != 0) {
      report.problems.push_back(
          fmt::format("cannot remove {}: {}", location.path, errno_text(errno)));
    } else {
      report.removed = true;
      if (auto synced = fsync_dir(parent_of(location.path)); !synced) {
        report.problems.push_back(synced.error().message);
      }
    }
  }
  return report;
}

}  // namespace sparkdoc::tune
