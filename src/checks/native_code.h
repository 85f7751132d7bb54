// The native-code rules: whether GPU code runs on a device of a given compute capability, and
// what the audit's facts (model/native.h) mean for each package, judged for one target. G1, G2,
// G7 and S9 stand on this judgement, and `sparkdoc audit` prints it. A recorded snapshot can be
// judged for any target (`sparkdoc check --snapshot F --arch 12.1`).
//
// GPU code (reference fatbin-and-elf.md §2.6; NVIDIA, "Blackwell and CUDA 12.9 introduce
// family-specific architecture features"; the nvcc documentation):
//   SASS sm_XY     runs on X.Z for Z >= Y (same major): sm_120 runs on 12.1, sm_90 does not.
//   SASS sm_XYf    the same: a family target runs on its major with a minor at least its own.
//   SASS sm_XYa    runs on X.Y only: sm_121a runs on 12.1, sm_120a does not, sm_90a on 9.0 only.
//   PTX compute_XY   the driver JIT-compiles it for any device with CC >= X.Y.
//   PTX compute_XYf  same major, minor >= Y. PTX compute_XYa: X.Y only.
// NVFP4: block-scaled MMA (kind::mxf4nvf4) compiles only for the 'a' and 'f' targets of the
// Blackwell majors (10, 11, 12); plain targets turn those kernels into traps. So code can use
// NVFP4 on a device when an entry that runs there was built for such a target. This says the
// target allows the instructions, not that a kernel uses them.
//
// Kernels that trap: where the driver would pick a SASS target (the runnable one of the
// highest SM) whose cubin holds vLLM's sm120-only guard, the container's kernels end in
// "This kernel only supports sm120." and cudaErrorLaunchFailure (field-2026.md §5).
//
// Packages (000 §2; 002 G1, G2, G7): flash-attn must have its CUDA extension; bitsandbytes
// its libbitsandbytes_cuda<torch's CUDA>.so (BNB_CUDA_VERSION overrides); mamba-ssm its
// selective_scan_cuda; causal-conv1d its extension; and for every package: CUDA libraries the
// loader would not find, needs of another CUDA major than torch's, and GPU code that does not
// run on the target.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.h"
#include "model/native.h"

namespace sparkdoc::checks {

// Target names ("sm_90", "compute_120f") in the architectures' order, not as strings sort them
// (sm_80 before sm_120, sm_120 before sm_120a; a name that is no target last), duplicates gone.
bool target_name_less(const std::string& a, const std::string& b);
void sort_target_names(std::vector<std::string>& names);

bool sass_runs_on(audit::GpuTarget target, gpu::ComputeCapability device);
bool ptx_jit_runs_on(audit::GpuTarget target, gpu::ComputeCapability device);
bool allows_block_scaled_fp4(audit::GpuTarget target);

// How a file's (or a package's) GPU code runs on the target. The names leave the process
// (`sparkdoc audit --json` "gpu"): append only.
enum class CodeRuns : uint8_t {
  kNoGpuCode,   // nothing to run: no fatbin, or no SASS/PTX entry in it
  kSass,        // some SASS entry runs on the device as is
  kPtxJitOnly,  // no SASS runs; some PTX can be JIT-compiled (slow first load)
  kDoesNotRun,  // neither: kernel launches fail with "no kernel image is available"
  kNotJudged,   // GPU code, but no target to judge it for
};
std::string_view code_runs_name(CodeRuns runs);  // "sass", "ptx_jit_only", ...

struct GpuCodeVerdict {
  CodeRuns run = CodeRuns::kNoGpuCode;
  bool nvfp4 = false;  // some entry that runs on the device was built for an NVFP4 target
  // Containers by the best way their code runs on the device. A file that runs (kSass) may
  // still have containers that do not, such as Hopper-only 'a' kernels.
  uint32_t containers_sass = 0;
  uint32_t containers_ptx_only = 0;
  uint32_t containers_none = 0;
  // Of containers_sass, those whose SASS the driver picks here (the runnable target of the
  // highest SM) holds the sm120-only guard: their kernels trap at launch (elf/guards.h).
  uint32_t containers_trapping = 0;
  std::vector<audit::GpuTarget> trapping_targets;  // the guarded targets picked, sorted
  std::vector<audit::GpuTarget> sass_targets;  // distinct, sorted: every SASS target present
  std::vector<audit::GpuTarget> ptx_targets;
  bool operator==(const GpuCodeVerdict&) const = default;
};
// One file's code groups on `device`.
GpuCodeVerdict judge_gpu_code(std::span<const audit::CodeGroup> code,
                              gpu::ComputeCapability device);

// The names leave the process (audit JSON "severity", "topic"): append only.
enum class Severity : uint8_t { kInfo, kWarn, kFail };
enum class NoteTopic : uint8_t {
  kLibraries,     // G1: libraries the loader would not find, another CUDA major
  kGpuCode,       // S9 (G2 for flash-attn): code that does not run on the target
  kPackage,       // a known package's own rule
  kNvfp4,         // G7
  kArchitecture,  // S9: files built for another machine than the audited one's
};
std::string_view severity_name(Severity severity);  // "info", "warn", "fail"
std::string_view topic_name(NoteTopic topic);       // "libraries", "gpu_code", ...

struct NativeNote {
  Severity severity = Severity::kInfo;
  NoteTopic topic = NoteTopic::kPackage;
  std::string text;
  bool operator==(const NativeNote&) const = default;
};

// A library a file needs that the loader would not find, or that implies another CUDA major
// than torch's.
struct LibraryProblem {
  std::string file;
  std::string soname;
  std::optional<int> cuda_major;  // what the soname implies, when it tells
  bool resolved = false;          // false: the loader would not find it
  bool cuda_library = false;      // a CUDA toolkit library (cudart, cublas, cudnn, nccl, ...)
  bool operator==(const LibraryProblem&) const = default;
};

struct PackageVerdict {
  std::string name;     // as the audit records it ("flash_attn")
  std::string key;      // PEP 503 ("flash-attn"), for lookups
  std::string version;  // "" when unknown
  uint32_t files = 0;
  uint32_t gpu_files = 0;
  std::vector<int> cuda_majors;  // CUDA majors its libraries' needs imply, ascending
  std::vector<LibraryProblem> problems;
  CodeRuns gpu = CodeRuns::kNoGpuCode;  // the least runnable over its files with GPU code
  std::vector<std::string> gpu_files_not_running;
  // Files whose kernels for the target hold the sm120-only guard, and the targets ("sm_121").
  std::vector<std::string> gpu_files_trapping;
  std::vector<std::string> trapping_targets;
  bool nvfp4 = false;
  std::vector<std::string> sass_targets;  // "sm_90", union over its files, sorted
  std::vector<std::string> ptx_targets;
  std::vector<NativeNote> notes;
  std::vector<std::string> errors;  // "why" for files that could not be read
  // Files built for another machine than the audit's (NativeFile::machine): named, neither
  // resolved nor judged, and counted in `files` only.
  std::vector<std::string> foreign_files;
  bool operator==(const PackageVerdict&) const = default;
};

// What the judgement is for: a compute capability and where it came from ("NVIDIA GB10",
// "--arch").
struct NativeTarget {
  gpu::ComputeCapability cc;
  std::string source;
};

struct FileVerdict {
  std::vector<int> cuda_majors;
  std::optional<GpuCodeVerdict> gpu;  // with a target and GPU code
  bool foreign = false;               // built for another machine: not judged
};

struct NativeVerdict {
  std::optional<NativeTarget> target;
  uint32_t files = 0;
  uint32_t gpu_files = 0;
  uint32_t errors = 0;
  uint32_t foreign_files = 0;              // built for another machine than `machine`
  std::string machine;                     // the audited machine (NativeAudit::machine)
  std::vector<PackageVerdict> packages;    // packages with native code, by name
  std::vector<FileVerdict> file_verdicts;  // one per audit.files, same order
};

// NVIDIA's own libraries (the nvidia-* distributions) load kernels that their .nv_fatbin does
// not hold (cuFFT keeps its per-architecture kernels in .ldata): a target missing there is no
// verdict, for the notes and for audit's matrix alike.
bool fatbin_is_not_all_gpu_code(std::string_view package_key);

// The facts judged for `target` (none: GPU code listed, not judged).
NativeVerdict judge_native(const audit::NativeAudit& facts,
                           const std::optional<NativeTarget>& target);

// The worst severity among notes; nullopt for none.
std::optional<Severity> worst_severity(const std::vector<NativeNote>& notes);

}  // namespace sparkdoc::checks
