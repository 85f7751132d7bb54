// Shell command lines as a POSIX shell splits them, for the commands a job runs: Dockerfile RUN
// lines, scripts, Makefile recipes, compose commands and --cmd. Quotes ('...', "..." with its
// backslash escapes) are removed, a backslash-newline joins lines, `#` at the start of a word
// begins a comment, and `&&`, `||`, `;`, `|`, `&`, parentheses and newlines separate commands.
// Leading NAME=value words are the command's environment. `$(...)`, `${...}` and backquotes are
// kept inside their word as written; nothing is expanded or run. Any text is accepted.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/job.h"

namespace sparkdoc::job {

// The commands of `text`, whose first line is `first_line` of its file.
std::vector<Command> parse_shell(std::string_view text, uint32_t first_line = 1);

}  // namespace sparkdoc::job
