// The file side of the journal (tune/journal.h), shared by its writer and its restore:
// folders made and checked, the file checked, locked and fsync'ed, an unfinished last line cut,
// whole lines made. Internal to tune. Nothing here prints.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "tune/journal.h"

namespace sparkdoc::tune::detail {

using nlohmann::json;

std::string errno_text(int err);
// "/a/b" for "/a/b/c", "/" for "/c", "." for "c".
std::string parent_of(const std::string& path);

// mkdir -p: missing components are created with `mode`; the last one must then be a real
// folder (not a link) owned by `euid` and writable by nobody else, or the journal in it could
// be swapped for something else under our feet.
Result<void> ensure_dir(const std::string& dir, mode_t mode, unsigned euid);
// The checks every opened journal passes: a regular file with one name, owned by the caller
// (made private when it is not).
Result<void> check_journal_file(int fd, const std::string& path, unsigned euid);
// An exclusive flock(2), without waiting: another sparkdoc holding it is an error.
Result<void> lock(int fd, const std::string& path);
Result<void> fsync_dir(const std::string& dir);
Result<void> write_all(int fd, std::string_view data, const std::string& path);
// Cuts an unfinished last line an earlier crash left (its change was never made).
Result<void> drop_torn_tail(int fd, const std::string& path);
// The file from the current offset, at most a little over kJournalMaxBytes.
Result<std::string> read_journal_fd(int fd, const std::string& path);

// `j` as one journal line, '\n' included.
Result<std::string> to_line(const json& j);
// Whether `s` is UTF-8 as it is: JSON needs UTF-8, and a path changed to fit would name another
// file at restore time.
bool is_utf8(std::string_view s);

}  // namespace sparkdoc::tune::detail
