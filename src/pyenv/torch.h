// What torch was built against, read from its files without importing it: torch/version.py
// (the CUDA version), the arch-list literal in libtorch_python.so, and the CUDA libraries that
// torch/lib's shared objects need, with where the loader would find each.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/pyenv.h"
#include "pyenv/discovery.h"

namespace sparkdoc::pyenv {

// The assignments of torch/version.py that matter, parsed as text:
//   __version__ = '2.11.0+cu130'
//   cuda: Optional[str] = '13.0'      (or cuda = '12.1' in older releases; None for CPU builds)
//   hip: Optional[str] = None         (a version string in ROCm builds)
struct TorchVersionFile {
  std::optional<std::string> version;  // nullopt when no __version__ line
  bool has_cuda_line = false;
  std::optional<std::string> cuda;  // nullopt when None (or no cuda line)
  std::optional<std::string> hip;
  bool operator==(const TorchVersionFile&) const = default;
};
TorchVersionFile parse_torch_version_py(std::string_view text);

// The CUDA arch list compiled into torch: the longest NUL-terminated run of two or more
// space-separated tokens sm_<digits>[a-z] or compute_<digits>[a-z], the first an sm_ one, not
// preceded by a letter, digit, '_' or space, at most 512 bytes
// ("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", NGC's "... sm_120 compute_120"). nullopt when the
// bytes hold none (CPU builds).
std::optional<std::string> find_arch_list(std::string_view bytes);

// The same over a file: only its .rodata* sections when it has section headers (a few MB of
// libtorch_python.so, which the literal lives in), else the whole file if it is at most 64 MiB;
// read in 1 MiB chunks. Errors: kAbsent when there is no file, kNotSupported for a larger file
// without section headers, kError when it cannot be read.
Result<std::optional<std::string>> scan_arch_list_file(const std::string& path);

// The CUDA major a soname implies: libcudart.so.12 -> 12, libcufft.so.12 -> 13. 0 when the
// soname does not tell (libcusparse.so.12, libcurand.so.10, libcudnn.so.9, libnccl.so.2,
// libcuda.so.1, ...). The rules are core/cuda_sonames.h's, shared with the checks.
int cuda_major_of_soname(std::string_view soname);

// Everything above for the torch package folder `torch_dir` (a machine path). Files are opened
// through options.root; CUDA libraries are searched as glibc would for each torch/lib object,
// by the audit's loader model (elf/loader.h): torch/lib itself (torch's own libraries are
// loaded first), the object's DT_RPATH unless it has a DT_RUNPATH, options.ld_library_path,
// its DT_RUNPATH, the loader's cache (options.ld_cache, else the root's /etc/ld.so.cache), then
// /lib/<multiarch>, /usr/lib/<multiarch>, /lib, /usr/lib, /lib64, /usr/lib64.
// Never fails: each part records its own absence.
TorchInfo read_torch(const DiscoveryOptions& options, const std::string& torch_dir);

}  // namespace sparkdoc::pyenv
