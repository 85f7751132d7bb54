// The PTX ISA rule: the driver JIT-compiles PTX only when the PTX's `.version` is no newer
// than the ISA its own CUDA version knows; minor-version compatibility covers SASS and the
// runtime, not PTX of a newer ISA (NVIDIA/nvbandwidth#61, 2026-03-26: "the provided PTX was
// compiled with an unsupported toolchain", CUDA_ERROR_UNSUPPORTED_PTX_VERSION, with nvcc 13.2
// on 580.159.03, whose cuDriverGetVersion is 13000).
// ISA -> CUDA (NVIDIA/cuda-python cuda/bindings/utils/_ptx_utils.py): 8.7 12.8, 8.8 12.9,
// 9.0 13.0, 9.1 13.1; 9.4 13.4 and 9.5 13.5 per third-party release notes; 9.2 and 9.3 as 13.2
// and 13.3 by the pattern, unverified. Verified on fatbins nvcc 13.0 built at compute_75,
// compute_90 and compute_120 (all ISA 9.0) and on hand-versioned 8.7 and 9.2 PTX
// (tests/fixtures/elf/ptx-isa*.fatbin).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "checks/native_code.h"
#include "model/native.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

// "9.0" -> 13000 (the CUDA version, as cuDriverGetVersion counts it, that first knows the
// ISA); ISA below 8.7 -> 12080 at most (any CUDA 12.8+ driver loads it: the rule needs no
// more); nullopt for text that is no ISA version or one newer than the table (9.6 and up).
std::optional<int> cuda_for_ptx_isa(std::string_view isa);

// Whether a driver of `driver_cuda` (13000) loads PTX of `isa`; nullopt when either is unknown.
std::optional<bool> driver_loads_ptx(std::string_view isa, int driver_cuda);

// "13.0" for 13000.
std::string cuda_version_text(int cuda);

// The driver's CUDA version: cuDriverGetVersion's, else NVML's; nullopt when neither was read.
std::optional<int> driver_cuda_version(const Snapshot& s);

// Adds a FAIL note (topic kGpuCode) to each package with a file whose only code for the target
// is PTX and none of that PTX is of an ISA the driver loads: the load fails with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION. A file with SASS that runs never reaches its PTX, and an
// entry whose ISA the header does not give is taken to load (never a false FAIL). Needs the
// verdict made by judge_native over the same facts, with a target.
void add_ptx_isa_notes(const audit::NativeAudit& facts, int driver_cuda, NativeVerdict& verdict);

}  // namespace sparkdoc::checks
