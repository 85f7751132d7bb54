// The folder a run's logs go to, made so that nothing another user controls is ever written
// through: `sparkdoc run` is often root, in a working folder that others can write.
//
//   no --log-dir   sparkdoc-runs/<UTC stamp>-<pid> in the working folder. sparkdoc-runs is made
//                  (0755) when missing, and otherwise must be private: a real folder (not a
//                  link) of this user's that neither group nor others can write. The run's own
//                  folder is always new: a taken name, a planted link included, gets -2, -3, ...
//   --log-dir DIR  made when missing (missing parents too, as mkdir -p does); an existing DIR
//                  must be private, as above, and empty.
//
// The run's files are then made by name under the folder's descriptor (core/fs.h create_file:
// O_EXCL|O_NOFOLLOW), so a link planted at a name, or the folder's path swapped meanwhile,
// changes nothing.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <string>

#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::run {

// The default folder's name in sparkdoc-runs at `now` for this pid: "20261129-101500-4242".
std::string run_folder_name(std::time_t now, pid_t pid);

// The folder for this run's logs: `log_dir` when given, else the default. Errors say what is
// wrong with the folder and what to do instead; nothing is made then.
Result<Dir> make_log_folder(const std::string& log_dir, unsigned euid);

}  // namespace sparkdoc::run
