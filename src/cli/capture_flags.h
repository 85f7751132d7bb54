// Options shared by every command that takes a live snapshot.
#pragma once

#include <string>

#include "snapshot/capture.h"

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

  void add_to(CLI::App& command);
  CaptureOptions options() const;
};

}  // namespace sparkdoc::cli
