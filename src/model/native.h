// What the native-code audit records of a Python environment: facts about each shared object,
// never a verdict. Per file: the libraries it needs and where the loader would find them, and
// its GPU code as groups of containers built for the same targets (with each PTX entry's ISA
// version). Whether that code runs on a given GPU is judged later, by the checks
// (checks/native_code.h), for any target: the GPU of the machine, or `--arch` when a recorded
// snapshot is judged for another one.
//
// JSON keys are public (snapshot schema 2): append only.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.h"

namespace sparkdoc::audit {

// The variant suffix of a target: sm_121a is arch-specific, sm_120f family-specific.
// Reference: shared/reference/fatbin-and-elf.md §2.6.
enum class ArchVariant : uint8_t { kPlain, kArchSpecific, kFamilySpecific };

// What an entry was built for: 121 with kArchSpecific is sm_121a (or compute_121a).
struct GpuTarget {
  uint32_t sm = 0;
  ArchVariant variant = ArchVariant::kPlain;
  uint32_t major() const { return sm / 10; }
  uint32_t minor() const { return sm % 10; }
  bool operator==(const GpuTarget&) const = default;
  auto operator<=>(const GpuTarget&) const = default;
};

std::string sass_name(GpuTarget target);  // "sm_121a"
std::string ptx_name(GpuTarget target);   // "compute_120f"
// "sm_121a" or "compute_90" (either prefix) -> the target; nullopt for anything else.
std::optional<GpuTarget> parse_target(std::string_view name);

// "12.1" or "9.0" (what nvidia-smi and torch.cuda.get_device_capability report); nullopt for
// anything else. The minor is one digit, as in every SM number the toolkits use.
std::optional<gpu::ComputeCapability> parse_compute_capability(std::string_view text);
std::string compute_capability_text(const gpu::ComputeCapability& cc);  // "12.1"

// A PTX entry: its target and the PTX ISA version its header records ("9.0" for CUDA 13.0's
// nvcc; "" when the header holds none).
struct PtxEntry {
  GpuTarget target;
  std::string isa;
  bool operator==(const PtxEntry&) const = default;
  auto operator<=>(const PtxEntry&) const = default;
};

// Containers (translation units) of a file whose entries were built for exactly these targets,
// and how many there are. A group with neither SASS nor PTX counts containers that hold only
// other entries (LTO-IR). Only the section cuobjdump lists is recorded (elf/listing.h).
struct CodeGroup {
  std::vector<GpuTarget> sass;  // sorted, distinct
  std::vector<PtxEntry> ptx;    // sorted, distinct
  uint32_t containers = 0;
  // Those of `sass` whose cubins hold vLLM's sm120-only guard (elf/guards.h): their kernels
  // trap where the driver picks them. Sorted, distinct; empty in audits recorded before.
  std::vector<GpuTarget> sm120_only;
  bool operator==(const CodeGroup&) const = default;
};

// A library a file needs (DT_NEEDED) and where the loader would find it; the driver's own
// libraries (libcuda.so.1, libnvidia-ml.so.1) are the driver's question and not recorded.
struct LibraryNeed {
  std::string soname;
  std::optional<std::string> path;  // machine path; none: the loader would not find it
  std::string via;                  // how: "rpath", "runpath", "ld_cache", "not_found", ...
  bool operator==(const LibraryNeed&) const = default;
};

struct NativeFile {
  std::string file;     // relative to the site-packages folder
  std::string package;  // the distribution owning it (RECORD), else its top folder
  std::string error;    // set when the file could not be read; nothing else is then
  std::vector<LibraryNeed> needs;
  std::vector<CodeGroup> gpu_code;  // empty: no GPU code
  // With error: the file changed while it was read (an install beside the audit truncated,
  // rewrote or replaced it), so reading it again once installs are done may succeed.
  bool changed_during_read = false;
  // The machine it was built for, as `uname -m` names it ("aarch64", "x86_64"); "" when its
  // header was not read. One other than NativeAudit::machine is no file this machine loads:
  // its needs are then not resolved.
  std::string machine;
  bool operator==(const NativeFile&) const = default;
};

struct NativeAudit {
  std::string site_packages;     // the folder audited
  std::string torch_cuda;        // torch.version.cuda, "" when unknown or CPU-only
  std::string bnb_cuda_version;  // $BNB_CUDA_VERSION, which overrides bitsandbytes' choice
  std::string error;             // the folder could not be indexed: nothing else was read
  double elapsed_ms = 0;
  std::vector<NativeFile> files;                // shared objects, by file
  std::map<std::string, std::string> versions;  // package (as in NativeFile) -> version
  // Extension modules a package's Python imports inside try/except, so that their absence is
  // no import error: mamba-ssm's selective_scan_cuda once 000 §4's patch is applied.
  std::vector<std::string> guarded_imports;
  // The machine whose loader the audit emulated ("aarch64" on a Spark); "" in audits recorded
  // before it was kept, or on a machine sparkdoc does not know: no file is then foreign.
  std::string machine;
  bool operator==(const NativeAudit&) const = default;
};

}  // namespace sparkdoc::audit
