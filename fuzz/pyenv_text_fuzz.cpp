// The files of a Python environment that sparkdoc reads without starting Python: pyvenv.cfg,
// a dist-info folder's name and METADATA, torch/version.py, the arch-list literal in
// libtorch's .rodata, and the version in a python3.X name. Every parser sees the same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/cuda_sonames.h"
#include "core/names.h"
#include "pyenv/discovery.h"
#include "pyenv/dist_info.h"
#include "pyenv/torch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::pyenv;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  PyvenvCfg cfg = parse_pyvenv_cfg(text);
  if (auto version = python_major_minor(cfg.version)) {
    if (version->find('.') == std::string::npos) __builtin_trap();
  }
  (void)python_major_minor(text);
  if (auto folder = parse_dist_folder(text)) {
    // Normalizing twice changes nothing.
    std::string once = sparkdoc::pep503_name(folder->name);
    if (sparkdoc::pep503_name(once) != once) __builtin_trap();
    (void)is_watched(once);
  }
  (void)parse_metadata(text);
  TorchVersionFile version = parse_torch_version_py(text);
  if (version.cuda && !version.has_cuda_line) __builtin_trap();
  if (auto arch = find_arch_list(text)) {
    // The list is a slice of the bytes.
    if (arch->empty() || text.find(*arch) == std::string_view::npos) __builtin_trap();
  }
  (void)sparkdoc::is_cuda_soname(text);
  (void)cuda_major_of_soname(text);
  return 0;
}
