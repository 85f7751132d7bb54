// Options shared by every command that takes a live snapshot.
#pragma once

#include <string>
#include <string_view>

#include "capture/capture.h"

namespace CLI {
class App;
}

namespace sparkdoc::cli {

struct CaptureFlags {
  std::string python;
  std::string site_packages;
  std::string config_dir = ".";
  bool no_gpu = false;
  bool cuda_devices_always = false;  // snapshot: true; check: --cuda
  std::string root;  // hidden: read /proc and /sys under this folder (fixture trees)
  bool no_cache = false;  // --no-cache (commands that audit): the audit reads every file

  // Adds the options, and a check once the command line is parsed: an explicit --python path
  // must name an executable file or an environment's folder, and --site-packages a folder
  // (under --root when given); otherwise the command stops with a usage error instead of
  // guessing an environment from a wrong path.
  void add_to(CLI::App& command);
  // --no-cache, for the commands that audit the native code (check, snapshot, audit, run).
  void add_cache_option(CLI::App& command);
  CaptureOptions options() const;
  // Why the paths given cannot be used, or empty.
  std::string path_problem() const;
};

// capture(options), with a line "sparkdoc COMMAND: auditing native libraries 312/844" on a
// terminal when the audit takes over a second (a cold file cache: a few seconds for a full
// CUDA stack; warm, a tenth of one).
Snapshot capture_live(CaptureOptions options, std::string_view command);

}  // namespace sparkdoc::cli
