// What the man pages and the completions read of the command line's CLI11 app (cli/docs.h):
// its commands, each command's options and positionals, how an option is spelt and what its
// value names. Internal to cli/man_page.cpp and cli/completion.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace sparkdoc::cli::docs {

std::vector<const CLI::App*> commands_of(const CLI::App& app);
std::vector<const CLI::Option*> options_of(const CLI::App& command);
std::vector<const CLI::Option*> positionals_of(const CLI::App& command);

// Every spelling of an option, short ones first: {"-o", "--output"}.
std::vector<std::string> spellings(const CLI::Option& option);

bool takes_value(const CLI::Option& option);

// What the value of an option names, for completion: a folder, a file (or path), or neither.
enum class ValueKind { kNone, kFile, kDirectory };
ValueKind value_kind(const CLI::Option& option);

// The type name as --help shows it, without CLI11's "=default" suffix.
std::string value_name(const CLI::Option& option);

// The command table's one-line summary of a command ("" for none).
std::string_view summary_of(std::string_view name);

}  // namespace sparkdoc::cli::docs
