#include "cli/capture_flags.h"

#include <CLI/CLI.hpp>

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
  command.add_option("--root", root, "Read /proc, /sys and /dev under this folder (testing)")
      ->group("");
}

CaptureOptions CaptureFlags::options() const {
  CaptureOptions o;
  if (!root.empty()) o.root = Root(root);
  o.python = python;
  o.site_packages = site_packages;
  o.config_dir = config_dir;
  o.read_gpu = !no_gpu;
  o.cuda_devices_always = cuda_devices_always;
  return o;
}

}  // namespace sparkdoc::cli
