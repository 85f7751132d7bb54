// Which GPU code runs on a device of a given compute capability, and whether it may use NVFP4
// block-scaled MMA. Rules: shared/reference/fatbin-and-elf.md §2.6 (NVIDIA, "Blackwell and
// CUDA 12.9 introduce family-specific architecture features"; the nvcc documentation).
//
//   SASS sm_XY     runs on X.Z for Z >= Y (same major): sm_120 runs on 12.1, sm_90 does not.
//   SASS sm_XYf    the same: a family target runs on its major with a minor at least its own.
//   SASS sm_XYa    runs on X.Y only: sm_121a runs on 12.1, sm_120a does not, sm_90a on 9.0 only.
//   PTX compute_XY   the driver JIT-compiles it for any device with CC >= X.Y.
//   PTX compute_XYf  same major, minor >= Y. PTX compute_XYa: X.Y only.
// The PTX ISA version must also be one the installed driver accepts; that is the driver's
// business and not checked here.
//
// NVFP4: block-scaled MMA (mma ... kind::mxf4nvf4 .block_scale, tcgen05 kind::mxf4nvf4) only
// compiles for the arch-specific and family targets of the Blackwell majors (10, 11, 12);
// plain targets turn those kernels into traps. So code can use NVFP4 on a device when an entry
// that runs there was built for an 'a' or 'f' Blackwell target: on 12.1 that is sm_121a,
// sm_120f, sm_121f and the same PTX targets. This says the target allows the instructions, not
// that a kernel uses them.
//
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elf/fatbin.h"

namespace sparkdoc::elf {

struct ComputeCapability {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t sm() const { return major * 10 + minor; }  // 12.1 -> 121
  bool operator==(const ComputeCapability&) const = default;
};

// "12.1" or "9.0" (what nvidia-smi and torch.cuda.get_device_capability report); nullopt for
// anything else. The minor is one digit, as in every SM number the toolkits use.
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);

// The variant suffix of a target. The values leave the process (audit JSON): append only.
enum class ArchVariant : uint8_t { kPlain, kArchSpecific, kFamilySpecific };

struct GpuTarget {
  uint32_t sm = 0;  // 121 for sm_121a
  ArchVariant variant = ArchVariant::kPlain;
  bool operator==(const GpuTarget&) const = default;
  auto operator<=>(const GpuTarget&) const = default;
};

std::string sass_name(GpuTarget target);  // "sm_121a"
std::string ptx_name(GpuTarget target);   // "compute_120f"

bool sass_runs_on(GpuTarget target, ComputeCapability device);
bool ptx_jit_runs_on(GpuTarget target, ComputeCapability device);
bool allows_block_scaled_fp4(GpuTarget target);

// The target an entry was built for. SASS: the header arch; 'a' when the header flag or the
// cubin says so (§2.5: headers first, the cubin as a cross-check), else 'f' from the header.
// PTX: the header alone (a PTX header is all cuobjdump reads too).
GpuTarget entry_target(const FatbinEntry& entry);

enum class EntryUse : uint8_t { kNone, kSass, kPtxJit };
// LTO-IR and unknown kinds never run by themselves.
EntryUse entry_use_on(const FatbinEntry& entry, ComputeCapability device);

// The values leave the process (audit JSON): append only.
enum class RunVerdict : uint8_t {
  kNoGpuCode,   // nothing to run: no fatbin, or no SASS/PTX entry in it
  kSass,        // some SASS entry runs on the device as is
  kPtxJitOnly,  // no SASS runs; some PTX can be JIT-compiled (slow first load)
  kDoesNotRun,  // neither: kernel launches fail with "no kernel image is available"
};
std::string_view verdict_name(RunVerdict verdict);  // "sass", "ptx_jit_only", ...

struct GpuCodeVerdict {
  RunVerdict run = RunVerdict::kNoGpuCode;
  bool nvfp4 = false;  // some entry that runs on the device was built for an NVFP4 target
  // Containers (translation units) by the best way their code runs on the device. A file that
  // runs (run == kSass) may still have containers that do not, such as Hopper-only 'a' kernels.
  uint32_t containers_sass = 0;
  uint32_t containers_ptx_only = 0;
  uint32_t containers_none = 0;
  std::vector<GpuTarget> sass_targets;  // distinct, sorted: every SASS target present
  std::vector<GpuTarget> ptx_targets;
  bool operator==(const GpuCodeVerdict&) const = default;
};

// Judges the entries cuobjdump would list (cuobjdump_section in listing.h): the device-linked
// .nv_fatbin when there is one. Whether the runtime ever JIT-links PTX held only in the
// __nv_relfatbin of a linked file is not established (reference §1.1); callers that care
// report those entries apart.
GpuCodeVerdict judge(const GpuCode& code, ComputeCapability device);

// judge() one container at a time, for files read with scan_gpu_code (fatbin.h), which keeps no
// entries: a running verdict per fatbin section, and at the end the section cuobjdump lists.
// judge() is this over a whole GpuCode.
class VerdictBuilder {
 public:
  explicit VerdictBuilder(ComputeCapability device) : device_(device) {}

  // One container's entries, all of its section (container null: entries outside any
  // container, as a bare cubin's). A container without entries counts for the choice of
  // section and for nothing else.
  void add(const FatbinContainer* container, std::span<const FatbinEntry> entries);

  // The section cuobjdump lists for a file of `kind` holding what was added: cuobjdump_section's
  // rule, from what was added (listing.h).
  FatbinSection listed_section(GpuFileKind kind) const;

  // The verdict over what was added of `section`.
  GpuCodeVerdict verdict(FatbinSection section) const;

 private:
  struct Part {
    GpuCodeVerdict verdict;
    bool has_container = false;
    bool any_entry = false;
    uint8_t best = 0;  // the best use of any entry
  };
  Part& part(FatbinSection section) { return parts_[static_cast<size_t>(section)]; }

  ComputeCapability device_;
  std::array<Part, 4> parts_{};  // by FatbinSection
  std::optional<FatbinSection> first_container_section_;
};

}  // namespace sparkdoc::elf
