// The kernel values sparkdoc may change, and the only code that writes them.
//
// Writers touch a fixed allow-list of /proc/sys/vm files, mapped through a Root (the live
// machine, or a fixture folder in tests), never through a shell: open(2) with
// O_WRONLY|O_TRUNC|O_NOFOLLOW|O_CLOEXEC and one write(2). Files are never created: on the live
// machine they are the kernel's; in a fixture root a missing file is an error like any other.
// Threading: no shared state; the kernel serialises writes to one file.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::tune {

class JournalWriter;

enum class Tunable { kDropCaches, kMinFreeKbytes, kVfsCachePressure, kSwappiness };

struct TunableInfo {
  Tunable id;
  std::string_view path;  // machine path, "/proc/sys/vm/min_free_kbytes"
  std::string_view name;  // "min_free_kbytes"
  // A value that stays changed and is journaled; drop_caches is an action (write-only, mode
  // 0200), nothing to read back or restore.
  bool setting;
  // The values a restore writes back (clean --restore, a run's restore): a journal is a file,
  // and a value outside these is not one a machine had, so it is left alone (see tunables.cpp).
  int64_t restore_min = 0;
  int64_t restore_max = 0;
};

// The allow-list, in a fixed order.
std::span<const TunableInfo> tunables();
const TunableInfo& tunable_info(Tunable tunable);
// The allow-listed entry for a machine path, or nullptr: paths read back from a journal go
// through this before anything is written.
const TunableInfo* find_tunable(std::string_view machine_path);

// The load-window values of 000 §6 ("Why min_free_kbytes=1048576 (1 GB)": the kernel reclaims
// file pages early during the load; "vfs_cache_pressure=500": five times more eager eviction),
// and the defaults the seed restores afterwards ("min_free_kbytes=45166, vfs_cache_pressure=
// 100"). sparkdoc restores what it read before the change, not these defaults.
inline constexpr int64_t kLoadMinFreeKbytes = 1048576;
inline constexpr int64_t kLoadVfsCachePressure = 500;
inline constexpr int64_t kSeedDefaultMinFreeKbytes = 45166;
inline constexpr int64_t kSeedDefaultVfsCachePressure = 100;
// "echo 3 > /proc/sys/vm/drop_caches": free the page cache and reclaimable slab (dentries and
// inodes).
inline constexpr int64_t kDropPageCacheAndSlab = 3;

// Reads a setting's current value. drop_caches is not readable: an error.
Result<int64_t> read_tunable(const Root& root, Tunable tunable);
// Writes "<value>\n" in one write(2). A symbolic link at the path is refused (ELOOP).
Result<void> write_tunable(const Root& root, Tunable tunable, int64_t value);

// A setting changed by set_tunable.
struct Change {
  std::string path;  // machine path
  int64_t old_value = 0;
  int64_t new_value = 0;
  bool changed = false;  // false: it already held new_value; nothing journaled or written
  bool operator==(const Change&) const = default;
};

// Reads the current value, records it in the journal (written and fsync'ed), then writes the
// new one: the order that lets `clean --restore` undo the change after any crash. Not for
// drop_caches, which is an action, not a setting.
Result<Change> set_tunable(JournalWriter& journal, const Root& root, Tunable tunable,
                           int64_t new_value);

// sync(2), then drop_caches = 3: dirty pages are written out first so that the drop can free
// them too (the seed's "sync; echo 3 > /proc/sys/vm/drop_caches"). sync(2) is skipped on a
// fixture root, where it would only flush this machine's disks.
Result<void> sync_and_drop_caches(const Root& root);

// Why this process may not change the machine, or nullopt when it may: the kernel values and
// swap areas need root (effective uid 0). Pure, so tests can ask it for any uid.
std::optional<std::string> privilege_problem(unsigned euid);

}  // namespace sparkdoc::tune
