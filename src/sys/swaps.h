// /proc/swaps: the active swap areas, for the swap reset of `sparkdoc clean` (000 §6 turns the
// swap file off and on again before a model load so that nothing of the run sits in swap).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses /proc/swaps text: a header line, then one line per area with five fields (name, type,
// size in kB, used in kB, priority). The kernel writes spaces, tabs, newlines and backslashes
// in names as octal escapes (\040); they are decoded. Errors: no header, or a line that does
// not have five fields with numbers where numbers belong.
Result<std::vector<SwapArea>> parse_swaps(std::string_view text);

// Reads <root>/proc/swaps. Absent when the file is missing (a kernel without swap support).
Result<std::vector<SwapArea>> read_swaps(const Root& root);

}  // namespace sparkdoc::sys
