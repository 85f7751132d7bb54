// Reads a Python script's imports, calls and assignments from its text (model/python_source.h),
// without running it: the tokens of job/python_tokens.h parsed into expressions, as far as the
// lint rules need. Names resolve through the module's imports (`from unsloth import FastModel as
// FM` makes `FM.from_pretrained` read as unsloth.FastModel.from_pretrained); a name assigned a
// value (`args = SFTConfig(...)`) is found by PySource::value_of.
//
// Function bodies are read like the module body (a call inside `def main():` counts), function
// parameters' defaults are not calls. Any text is accepted; nesting deeper than 64 brackets or
// calls is skipped and marked `truncated`, and so is what is left once 32 expressions per token
// have been read (text shaped to make the reader go over it again and again). Never throws;
// about linear in the input.
#pragma once

#include <string_view>

#include "model/python_source.h"

namespace sparkdoc::job {

PySource parse_python_source(std::string_view text);

// The rule IDs a comment asks not to report: "# sparkdoc: ignore L12, L14" -> {"L12", "L14"};
// none when it does not say "sparkdoc: ignore".
std::vector<std::string> ignored_ids(std::string_view comment);

}  // namespace sparkdoc::job
