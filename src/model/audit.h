// What the native-code audit finds in a Python environment, per distribution: the CUDA major
// its libraries need, the libraries the loader would not find, and whether its GPU code runs
// on the target GPU. The snapshot stores this (G1, G2, G7 judge it); `sparkdoc audit --json`
// adds the per-file detail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sparkdoc::audit {

// A library a file needs that the loader would not find, or that implies another CUDA major
// than torch's.
struct LibraryProblem {
  std::string file;               // relative to the site-packages folder
  std::string soname;             // "libcudart.so.12"
  std::optional<int> cuda_major;  // what the soname implies, when it tells
  bool resolved = false;          // false: the loader would not find it
  bool cuda_library = false;      // a CUDA toolkit library (cudart, cublas, cudnn, nccl, ...)
  bool operator==(const LibraryProblem&) const = default;
};

// A finding of a rule for a known package (flash-attn, bitsandbytes, mamba-ssm, ...).
struct Note {
  std::string severity;  // "fail", "warn", "info"
  std::string text;
  // What it is about, so each check reports its own: "libraries" (G1), "gpu_code",
  // "package" (a known package's rule), "nvfp4" (G7).
  std::string topic;
  bool operator==(const Note&) const = default;
};

struct PackageAudit {
  std::string name;              // distribution name as installed ("flash_attn"), or the top folder
  std::string key;               // the name normalised (PEP 503: "flash-attn"), for lookups
  std::string version;           // "" when unknown
  uint32_t files = 0;            // native files (shared objects) it owns
  uint32_t gpu_files = 0;        // of which carry GPU code
  std::vector<int> cuda_majors;  // CUDA majors its libraries' needs imply, ascending
  std::vector<LibraryProblem> problems;
  // Over its files with GPU code, the least runnable (elf::verdict_name): "sass",
  // "ptx_jit_only", "does_not_run"; "no_gpu_code" without any; "not_judged" without a target.
  std::string gpu = "no_gpu_code";
  std::vector<std::string> gpu_files_not_running;  // files whose GPU code does not run
  bool nvfp4 = false;                     // some runnable code was built for an NVFP4 target
  std::vector<std::string> sass_targets;  // "sm_90", "sm_121a", union over its files
  std::vector<std::string> ptx_targets;   // "compute_90"
  std::vector<Note> notes;
  std::vector<std::string> errors;  // "file: why" for files that could not be read
  bool operator==(const PackageAudit&) const = default;
};

struct NativeAudit {
  std::string site_packages;  // the folder audited
  std::string target;         // "12.1"; "" when no target was known (GPU verdicts not judged)
  std::string target_source;  // "NVIDIA GB10", "--arch"
  std::string torch_cuda;     // torch.version.cuda, "" when unknown or CPU-only
  uint32_t files = 0;
  uint32_t gpu_files = 0;
  uint32_t errors = 0;
  double elapsed_ms = 0;
  std::vector<PackageAudit> packages;  // packages with native code, by name
  bool operator==(const NativeAudit&) const = default;
};

}  // namespace sparkdoc::audit
