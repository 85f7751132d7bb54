#include "cli/capture_flags.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string_view>

#include "cli/progress.h"
#include "cli/root_option.h"
#include "core/fs.h"

namespace sparkdoc::cli {

void CaptureFlags::add_to(CLI::App& command) {
  command.add_option("--python", python,
                     "Python interpreter whose environment to inspect first (default: the active "
                     "VIRTUAL_ENV or CONDA_PREFIX, then python3 on PATH)")
      ->type_name("PATH");
  command.add_option("--site-packages", site_packages,
                     "A site-packages folder to inspect first (no interpreter needed)")
      ->type_name("DIR");
  command.add_option("--config-dir", config_dir,
                     "Folder scanned (two levels) for tensor-parallel settings, for G10")
      ->type_name("DIR")
      ->capture_default_str();
  command.add_flag("--no-gpu", no_gpu, "Do not load NVML or the CUDA driver");
  add_root_option(command, root, "Read /proc, /sys and /dev under this folder (testing)");
  command.parse_complete_callback([this] {
    if (std::string why = path_problem(); !why.empty()) throw CLI::ValidationError(why);
  });
}

void CaptureFlags::add_cache_option(CLI::App& command) {
  command.add_flag(
      "--no-cache", no_cache,
      "Read every shared object's headers instead of taking the facts of unchanged files from "
      "sparkdoc's audit cache ($SPARKDOC_CACHE/audit, else ~/.cache/sparkdoc/audit: what each "
      "file needs and its GPU code, by device, inode, size and timestamps), and neither read "
      "nor write the cache; SPARKDOC_NO_AUDIT_CACHE=1 does the same. The result is the same "
      "either way; with the cache, the first run after a reboot reads only what changed");
}

std::string CaptureFlags::path_problem() const {
  const Root r = root.empty() ? Root() : Root(root);
  // A bare name ("python3.12") is looked up on PATH by the probe, which reports a miss.
  if (python.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(r.path(python).c_str(), &st) != 0) {
      return "--python " + python + ": no such file or folder";
    }
    if (!S_ISDIR(st.st_mode) && (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)) {
      return "--python " + python +
             ": not an executable file or an environment's folder (give the interpreter, e.g. "
             "~/venv/bin/python3, or the venv folder)";
    }
  }
  if (!site_packages.empty() && !is_dir(r.path(site_packages))) {
    return "--site-packages " + site_packages +
           " is not a folder that can be read; name a site-packages folder (python3 -c 'import "
           "site; print(site.getsitepackages())' lists them)";
  }
  return "";
}

CaptureOptions CaptureFlags::options() const {
  CaptureOptions o;
  if (!root.empty()) o.root = Root(root);
  o.python = python;
  o.site_packages = site_packages;
  o.config_dir = config_dir;
  o.read_gpu = !no_gpu;
  o.cuda_devices_always = cuda_devices_always;
  const char* off = std::getenv("SPARKDOC_NO_AUDIT_CACHE");
  o.audit_cache = !no_cache && (off == nullptr || off[0] == '\0' || std::string_view(off) == "0");
  return o;
}

Snapshot capture_live(CaptureOptions options, std::string_view command) {
  ProgressLine progress(std::chrono::seconds(1));
  if (progress.enabled()) {
    options.audit_progress = [&progress, command](size_t done, size_t total) {
      progress.show(fmt::format("sparkdoc {}: auditing native libraries {}/{}", command, done,
                                total));
    };
  }
  Snapshot snapshot = capture(options);
  progress.clear();
  return snapshot;
}

}  // namespace sparkdoc::cli
