// Finding Python environments without starting Python: from the variables an activated
// environment sets, from python3 on PATH, or from what the user named on the command line.
//
// All paths given and returned are absolute machine paths ("/opt/venv"); the caller makes a
// relative --python or --site-packages absolute first. Files are opened through options.root,
// so a fixture tree stands in for the machine in tests. Nothing here reads the process
// environment: the caller passes the values in.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/paths.h"
#include "elf/ld_cache.h"
#include "elf/machine.h"

namespace sparkdoc::pyenv {

struct DiscoveryOptions {
  Root root;                    // the live machine, or a fixture tree
  std::string python;           // --python: an interpreter path, a name looked up on PATH, or
                                // an environment's folder
  std::string site_packages;    // --site-packages: one folder to inspect
  std::string virtual_env;      // $VIRTUAL_ENV
  std::string conda_prefix;     // $CONDA_PREFIX
  std::string path;             // $PATH
  std::string ld_library_path;  // $LD_LIBRARY_PATH: searched for torch's CUDA libraries
  std::string cwd;              // the working directory: its (or a parent's) uv/venv .venv
  std::string pyenv_version;    // $PYENV_VERSION: which pyenv version a shim runs
  std::string pyenv_root;       // $PYENV_ROOT; "" takes the shims folder's parent
  std::string multiarch{host_multiarch()};  // "aarch64-linux-gnu"; "" skips /usr/lib/<triplet>
  // The loader's cache for torch's CUDA libraries; none: the root's /etc/ld.so.cache, read
  // when torch is found. The flags pick the entries of one architecture (0: any).
  std::optional<std::vector<elf::LdCacheEntry>> ld_cache;
  int32_t ld_cache_flags = elf::host_ld_cache_flags();
  // The loader's machine: a CUDA library built for another is passed over (elf/loader.h).
  elf::ElfMachine machine = elf::host_architecture().machine;
  // Reading torch's compiled arch list means reading libtorch_python.so's .rodata (a few MB;
  // about a millisecond warm). false records the reading as absent "not scanned".
  bool scan_arch_list = true;
};

// One environment to inspect, before its packages are read.
struct EnvCandidate {
  std::string source;       // "--python", "--site-packages", "VIRTUAL_ENV", "CONDA_PREFIX", "PATH"
  std::string prefix;       // sys.prefix: "/opt/venv", "/usr"
  std::string interpreter;  // the python3 path as found (symlinks kept); "" when unknown
  std::string python_version;  // "3.12", from the lib/python3.X folder; "" when unknown
  // Existing folders, in the order Python puts them on sys.path. For a venv created with
  // --system-site-packages the base interpreter's folders follow the venv's own.
  std::vector<std::string> site_packages;
  bool operator==(const EnvCandidate&) const = default;
};

// The candidates, in this order: --python and --site-packages, VIRTUAL_ENV, CONDA_PREFIX, the
// .venv of the working directory or its nearest parent that has one (uv's project environment,
// used by `uv run` without activation: source ".venv"), the first python3 on PATH that belongs
// to an environment, a pyenv shim resolved as pyenv does ($PYENV_VERSION, then .python-version
// from the working directory up, then $PYENV_ROOT/version: source "pyenv"); one per prefix (the
// first wins).
// Environments named on the command line are kept even when they hold no site-packages
// folder, so the report can say so; the others are dropped then. Never fails.
std::vector<EnvCandidate> find_environments(const DiscoveryOptions& options);

// The keys of pyvenv.cfg that matter here.
struct PyvenvCfg {
  std::string home;     // the base interpreter's folder: "/usr/bin"
  std::string version;  // "3.12.3" (version = or uv's version_info =)
  bool include_system_site_packages = false;
  bool operator==(const PyvenvCfg&) const = default;
};
PyvenvCfg parse_pyvenv_cfg(std::string_view text);

// "3.12" from "3.12.3", "3.12.3.final.0", "python3.12" or "3.12"; nullopt otherwise.
std::optional<std::string> python_major_minor(std::string_view text);

}  // namespace sparkdoc::pyenv
