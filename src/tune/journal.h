// The tuning journal: every value sparkdoc changes is written here, durably, before the change,
// so that `sparkdoc clean --restore` can put the machine back even after sparkdoc was killed
// half-way (DESIGN principle 5). `sparkdoc run` will use the same journal.
//
// Where (journal_location):
//   euid 0        /var/lib/sparkdoc/journal (the folder 0755, so any user's sparkdoc can notice
//                 an unrestored journal; the file 0600)
//   anyone else   $XDG_STATE_HOME/sparkdoc/journal when XDG_STATE_HOME is an absolute path (the
//                 XDG base directory rule: relative values are ignored), else
//                 $HOME/.local/state/sparkdoc/journal (the folder 0700)
// The path goes through the Root, so a test's journal lives in its fixture folder.
//
// Format, version 1: JSON lines, each ended by '\n', keys sorted.
//   {"command":"clean --yes --tune-vm","op":"begin","pid":4242,"sparkdoc_journal":1,
//    "started_at":"2026-11-29T10:15:00Z"}                  a session starts (first line)
//   {"new":"1048576","old":"45166","op":"set","path":"/proc/sys/vm/min_free_kbytes"}
//   {"op":"swapoff","path":"/swap.img","priority":-2}
//   {"name":"python3","op":"command","pid":4243,"start_ticks":81234567}
//       the command `sparkdoc run` started with the values in place; start_ticks is field 22
//       of its /proc/PID/stat (clock ticks after boot), which tells it from a reused pid
//   {"gpu_max_mhz":3003,"max_mhz":2200,"min_mhz":300,"name":"NVIDIA GB10","op":"gpu_clocks",
//    "uuid":"GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c"}
//       the GPU with that UUID about to have its clocks locked to min..max MHz
//       (tune/gpu_clocks.h); gpu_max_mhz, its highest clock, only when NVML read it. NVML cannot
//       read a lock back, so the state before is not recorded: a restore resets the GPU's
//       clocks to the driver's default (`nvidia-smi -rgc`), once per UUID.
// A run appends a "begin" line and then one line per change, each written and fsync'ed before
// the change it describes. A later run that finds the journal still there appends a session
// of its own; the value restored for a path is the first "old" recorded for it (what the
// machine had before sparkdoc first touched it), and a swap area recorded as turned off is
// turned on again unless /proc/swaps already lists it.
//
// Still version 1 with "gpu_clocks": a sparkdoc from before it reads such a line as a damaged
// one ("unknown op"), restores everything else and keeps the journal, as it does for any line
// it cannot restore. Nothing is lost, and a current sparkdoc restores the rest.
//
// Crash rule: a last line without its '\n' is a write cut short by a crash; its change was
// never made (the change follows the fsync of a whole line), so it is ignored and reported.
// A damaged whole line is reported too; then the journal is kept after a restore, for a person
// to read.
//
// Safety: the file is opened with O_NOFOLLOW|O_CLOEXEC (a symbolic link at the path is
// refused), must be a regular file with one link owned by the caller, and is created mode 0600.
// An exclusive flock(2) is held while a run writes it or a restore reads it, so two sparkdoc
// runs never interleave. Paths read back from a journal are written only when they are on the
// allow-list (tune/tunables.h), and only with integer values; GPU clocks are only ever reset,
// on the GPU with the recorded UUID.
//
// Threading: a JournalWriter is used from one thread. Nothing here prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "tune/swap.h"

namespace sparkdoc::tune {

class GpuClockControl;  // tune/gpu_clocks.h

inline constexpr int kJournalVersion = 1;
inline constexpr std::string_view kSystemJournalPath = "/var/lib/sparkdoc/journal";
// A journal holds a few lines per run; anything this large is not one of ours.
inline constexpr size_t kJournalMaxBytes = 1 << 20;
inline constexpr size_t kJournalMaxLineBytes = 4096;

struct JournalLocation {
  std::string machine_path;  // "/var/lib/sparkdoc/journal", as a person would look for it
  std::string path;          // machine_path through the Root; equal on the live machine
  bool system = false;       // root's journal under /var/lib/sparkdoc
  bool operator==(const JournalLocation&) const = default;
};

// The journal of a process with effective uid `euid` (see the table above). Errors when a
// non-root caller has neither an absolute XDG_STATE_HOME nor an absolute HOME.
Result<JournalLocation> journal_location(const Root& root, unsigned euid,
                                         std::string_view xdg_state_home, std::string_view home);

// The journals a start should look for: root's, and for other users also their own (a journal
// written under sudo is root's, and a plain `sparkdoc check` afterwards should still notice it).
std::vector<JournalLocation> journals_to_notice(const Root& root, unsigned euid,
                                                std::string_view xdg_state_home,
                                                std::string_view home);

// The first of journals_to_notice that exists (one lstat(2) each), else nullopt.
std::optional<JournalLocation> existing_journal(const Root& root, unsigned euid,
                                                std::string_view xdg_state_home,
                                                std::string_view home);

struct JournalSession {
  size_t line = 0;  // 1-based line number in the file
  int version = 0;
  int64_t pid = 0;
  std::string started_at;
  std::string command;
  // The command this session's `sparkdoc run` started ("command" line), when recorded: a
  // killed run's command may outlive it, and its values are meant for that command.
  int64_t command_pid = 0;
  uint64_t command_start_ticks = 0;  // 0: not recorded
  std::string command_name;          // for messages: argv[0]'s file name
  bool operator==(const JournalSession&) const = default;
};

struct ValueChange {
  size_t line = 0;
  std::string path;       // machine path, as recorded
  std::string old_value;  // as read before the change
  std::string new_value;
  bool operator==(const ValueChange&) const = default;
};

struct SwapOffRecord {
  size_t line = 0;
  std::string path;
  int priority = 0;
  bool operator==(const SwapOffRecord&) const = default;
};

struct GpuClocksRecord {
  size_t line = 0;
  std::string uuid;  // "GPU-..." as NVML names the GPU
  std::string name;  // for messages; may be empty
  unsigned min_mhz = 0;
  unsigned max_mhz = 0;
  std::optional<unsigned> gpu_max_mhz;
  bool operator==(const GpuClocksRecord&) const = default;
};

struct JournalContents {
  std::vector<JournalSession> sessions;
  std::vector<ValueChange> changes;         // in file order
  std::vector<SwapOffRecord> swaps_off;     // in file order
  std::vector<GpuClocksRecord> gpu_clocks;  // in file order
  std::vector<std::string> problems;     // "line 3: not a JSON object", one per damaged line
  size_t truncated_bytes = 0;            // length of an unterminated last line, ignored

  // (path, value before sparkdoc first changed it), in order of first change.
  std::vector<std::pair<std::string, std::string>> originals() const;
  // Each swap area recorded as turned off, once, with its first recorded priority.
  std::vector<SwapOffRecord> swap_areas() const;
  // Each GPU whose clocks were locked, once, with its first record.
  std::vector<GpuClocksRecord> clocked_gpus() const;
  bool empty() const { return changes.empty() && swaps_off.empty() && gpu_clocks.empty(); }
  bool operator==(const JournalContents&) const = default;
};

// Parses journal text. Pure. Errors: a first line that is not a version-1 "begin" line (not a
// journal, or one from a newer sparkdoc), or text over kJournalMaxBytes. Empty text, or only
// a truncated first line, is an empty journal: a crash before anything was changed.
Result<JournalContents> parse_journal(std::string_view text);

// Appends to the journal; see the file comment for the rules it keeps.
class JournalWriter {
 public:
  // Creates the folder (mode 0755 for root's, 0700 for a user's) and the file when missing,
  // opens it for appending, takes the lock, cuts an unfinished last line an earlier crash left
  // (its change was never made), and writes the session's "begin" line. Errors:
  // a symbolic link or other non-regular file at the path, a file or folder owned by someone
  // else, a folder writable by others, another sparkdoc holding the lock, any I/O failure.
  static Result<JournalWriter> open(const JournalLocation& location, unsigned euid,
                                    const JournalSession& session);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();

  // Each appends one line and fsyncs the file; call before making the change.
  Result<void> record_set(std::string_view machine_path, std::string_view old_value,
                          std::string_view new_value);
  Result<void> record_swapoff(std::string_view machine_path, int priority);
  Result<void> record_gpu_clocks(std::string_view uuid, std::string_view name, unsigned min_mhz,
                                 unsigned max_mhz, std::optional<unsigned> gpu_max_mhz);
  // The command started with the values in place; not a change (records() does not count it).
  Result<void> record_command(int64_t pid, uint64_t start_ticks, std::string_view name);

  // True when this writer created the file (no earlier unrestored journal was there).
  bool created() const { return created_; }
  // Lines of changes this writer recorded.
  size_t records() const { return records_; }
  const JournalLocation& location() const { return location_; }

  // Removes the journal, for a run that undid every change it recorded itself. Only a journal
  // this writer created is removed; otherwise an error says why it stays.
  Result<void> remove();

 private:
  JournalWriter() = default;
  Result<void> append_line(const std::string& line);

  int fd_ = -1;
  JournalLocation location_;
  bool created_ = false;
  size_t records_ = 0;
};

// What a restore did with one journaled value.
struct RestoredValue {
  std::string path;
  std::string original;               // the value written back
  std::optional<std::string> before;  // what the file held just before, when readable
  bool restored = false;
  std::string error;  // why not, when not restored
  bool operator==(const RestoredValue&) const = default;
};

struct RestoredSwap {
  std::string path;
  int priority = 0;
  bool was_on = false;    // /proc/swaps already listed it: nothing to do
  bool restored = false;  // on now (was_on, or swapon succeeded)
  std::string error;
  bool operator==(const RestoredSwap&) const = default;
};

struct RestoredClocks {
  std::string uuid;
  std::string name;
  bool restored = false;  // reset to the driver's default
  std::string error;
  bool operator==(const RestoredClocks&) const = default;
};

struct RestoreReport {
  JournalLocation location;
  bool found = false;  // no journal: nothing to restore
  std::vector<RestoredValue> values;
  std::vector<RestoredSwap> swaps;
  std::vector<RestoredClocks> gpu_clocks;
  std::vector<std::string> problems;  // from the parse, and entries that cannot be restored
  size_t truncated_bytes = 0;
  bool removed = false;  // the journal was removed after a complete restore
  // Nothing to restore, or every entry restored and the journal removed.
  bool complete() const;
};

// Writes every journaled original value back (latest session or not: the first recorded old
// value per path wins), turns journaled swap areas back on, resets the clocks of every GPU
// journaled as locked (through `clocks`; a GPU no longer there is a problem), and removes the
// journal when every entry was restored and no line was damaged; otherwise keeps it and says
// why. Entries off the allow-list or with non-integer values are refused, not written. Running
// it again after a partial restore is safe: it writes the same originals and resets again.
// Errors only when the journal cannot be opened, locked, or is not a journal at all.
Result<RestoreReport> restore_journal(const JournalLocation& location, const Root& root,
                                      unsigned euid, SwapControl& swap, GpuClockControl& clocks);
// The same with gpu_clock_control(root) (tune/gpu_clocks.h): NVML on the live machine.
Result<RestoreReport> restore_journal(const JournalLocation& location, const Root& root,
                                      unsigned euid, SwapControl& swap);

}  // namespace sparkdoc::tune
