#include "tune/tunables.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/fs.h"
#include "sys/vm.h"
#include "tune/journal.h"

namespace sparkdoc::tune {
namespace {

// Restore bounds. min_free_kbytes: the kernel's floor is 128 (Documentation/admin-guide/
// sysctl/vm.rst); 4 GiB is four times the load-window value sparkdoc sets, and a journal asking
// for more would starve a 128 GB machine of free pages (the kernel takes 100 GB without a word).
// vfs_cache_pressure: 0 never reclaims dentries and inodes ("can easily lead to out-of-memory",
// vm.rst), so a restore does not write it; 10000 is a hundred times the default. swappiness:
// the kernel's own range, 0-200.
constexpr std::array kTunables = {
    TunableInfo{Tunable::kDropCaches, "/proc/sys/vm/drop_caches", "drop_caches", false},
    TunableInfo{Tunable::kMinFreeKbytes, "/proc/sys/vm/min_free_kbytes", "min_free_kbytes", true,
                128, 4 * 1024 * 1024},
    TunableInfo{Tunable::kVfsCachePressure, "/proc/sys/vm/vfs_cache_pressure", "vfs_cache_pressure",
                true, 1, 10000},
    TunableInfo{Tunable::kSwappiness, "/proc/sys/vm/swappiness", "swappiness", true, 0, 200},
};

}  // namespace

std::span<const TunableInfo> tunables() {
  return kTunables;
}

const TunableInfo& tunable_info(Tunable tunable) {
  for (const auto& t : kTunables) {
    if (t.id == tunable) return t;
  }
  return kTunables.front();  // unreachable: every enumerator has a row
}

const TunableInfo* find_tunable(std::string_view machine_path) {
  for (const auto& t : kTunables) {
    if (t.path == machine_path) return &t;
  }
  return nullptr;
}

Result<int64_t> read_tunable(const Root& root, Tunable tunable) {
  const TunableInfo& info = tunable_info(tunable);
  if (!info.setting) return fail(fmt::format("{} cannot be read back", info.path));
  auto text = read_text(root.path(info.path), 4096);
  if (!text) return tl::unexpected(text.error());
  auto value = sys::parse_sysctl_int(*text);
  if (!value) return fail(fmt::format("{}: {}", info.path, value.error().message));
  return *value;
}

Result<void> write_tunable(const Root& root, Tunable tunable, int64_t value) {
  const TunableInfo& info = tunable_info(tunable);
  std::string path = root.path(info.path);
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      return fail(fmt::format("{} is a symbolic link; refusing to write through it", path));
    }
    return fail(why_from_errno(err), fmt::format("cannot open {}: {}", path, std::strerror(err)));
  }
  // One write(2): a sysctl parses what one write hands it, from offset 0.
  std::string text = fmt::format("{}\n", value);
  ssize_t n = -1;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  int closed = ::close(fd);
  if (n < 0) {
    return fail(why_from_errno(err),
                fmt::format("cannot write {} to {}: {}", value, path, std::strerror(err)));
  }
  if (static_cast<size_t>(n) != text.size()) {
    return fail(fmt::format("short write of {} to {}", value, path));
  }
  if (closed != 0) return fail(fmt::format("cannot close {}: {}", path, std::strerror(errno)));
  return {};
}

Result<Change> set_tunable(JournalWriter& journal, const Root& root, Tunable tunable,
                           int64_t new_value) {
  const TunableInfo& info = tunable_info(tunable);
  if (!info.setting) return fail(fmt::format("{} is not a setting", info.path));
  auto old_value = read_tunable(root, tunable);
  if (!old_value) return tl::unexpected(old_value.error());
  Change c{std::string(info.path), *old_value, new_value, false};
  if (*old_value == new_value) return c;
  auto recorded =
      journal.record_set(info.path, std::to_string(*old_value), std::to_string(new_value));
  if (!recorded) {
    return fail(fmt::format("{} not changed: the journal could not record its old value: {}",
                            info.path, recorded.error().message));
  }
  auto written = write_tunable(root, tunable, new_value);
  if (!written) return tl::unexpected(written.error());
  c.changed = true;
  return c;
}

Result<void> sync_and_drop_caches(const Root& root) {
  if (root.live()) ::sync();
  return write_tunable(root, Tunable::kDropCaches, kDropPageCacheAndSlab);
}

std::optional<std::string> privilege_problem(unsigned euid) {
  if (euid == 0) return std::nullopt;
  return fmt::format(
      "changing kernel memory settings and swap needs root (running as uid {}); nothing was "
      "changed",
      euid);
}

}  // namespace sparkdoc::tune
