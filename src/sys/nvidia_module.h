// /proc/driver/nvidia/version: which NVIDIA kernel module is loaded. Its version is the driver
// version every CUDA user-space library is judged against (G1), and GB10 ships only the open
// kernel module.
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses the file's text. Takes the first line starting "NVRM version:"; the version is the
// first word made of digits and dots with at least one dot ("580.95.05"); flavor is "open"
// when the line says "Open Kernel Module", else "proprietary"; line is the NVRM line trimmed.
// Errors: no NVRM line, or no version word on it.
Result<NvidiaKernelModule> parse_nvidia_version(std::string_view text);

// Reads <root>/proc/driver/nvidia/version. Absent ("nvidia kernel module not loaded") when
// the file is missing.
Result<NvidiaKernelModule> read_nvidia_module(const Root& root);

}  // namespace sparkdoc::sys
