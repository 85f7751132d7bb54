// /proc/pressure/memory: pressure stall information, the share of time tasks waited for memory.
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses PSI text: a "some" line and, on kernels since 5.2 for memory, a "full" line, each
// "avg10=P avg60=P avg300=P total=US" (averages in percent, total in microseconds). Fields
// may come in any order; unknown fields are ignored. Errors: no "some" line, or a line that
// lacks one of the four fields or carries an unparseable value.
Result<Psi> parse_psi(std::string_view text);

// Reads <root>/proc/pressure/memory. A missing file is absent with the detail
// "kernel without PSI": the kernel was built without CONFIG_PSI or booted with psi=0.
Result<Psi> read_memory_pressure(const Root& root);

}  // namespace sparkdoc::sys
