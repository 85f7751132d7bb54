// Python environments found without starting Python: where they are, which distributions
// they hold (dist-info), and what torch was built against.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"

namespace sparkdoc::pyenv {

struct Distribution {
  std::string name;      // PEP 503 normalized, as the map key ("torch", "nvidia-cuda-runtime")
  std::string version;   // "2.11.0+cu130"
  std::string location;  // the .dist-info or .egg-info directory
  bool operator==(const Distribution&) const = default;
};

// A CUDA library that torch's own libraries need, and where it would be found.
struct SonameNeed {
  std::string soname;                  // "libcudart.so.13"
  std::vector<std::string> needed_by;  // torch/lib file names
  std::optional<std::string> found;    // path found in torch's RPATH dirs, LD_LIBRARY_PATH or the
                                       // CUDA library folders; none when unresolved
  bool operator==(const SonameNeed&) const = default;
};

struct TorchInfo {
  std::string location;            // .../site-packages/torch
  Reading<std::string> version;    // torch/version.py __version__
  Reading<std::string> cuda;       // torch/version.py cuda; absent for CPU builds (None)
  Reading<std::string> arch_list;  // "sm_75 sm_80 ... sm_120" from libtorch_python.so
  Reading<std::vector<SonameNeed>> cuda_sonames;
  bool operator==(const TorchInfo&) const = default;
};

struct PythonEnv {
  std::string source;       // "VIRTUAL_ENV", "CONDA_PREFIX", "PATH", "--python", "--site-packages"
  std::string prefix;       // environment root ("/opt/venv", "/usr")
  std::string interpreter;  // python3 path when known
  std::string python_version;  // "3.12" from lib/python3.12
  std::vector<std::string> site_packages;
  std::map<std::string, Distribution> packages;  // watched names only, key = normalized name
  Reading<TorchInfo> torch;
  // Watched distributions seen again after the one in `packages`: a second metadata folder of
  // the same name (an interrupted or mixed install), or a copy in a later site-packages folder
  // that the first one shadows.
  std::vector<Distribution> duplicates;
  bool operator==(const PythonEnv&) const = default;
};

}  // namespace sparkdoc::pyenv
