// Man pages and shell completions written from the command line itself (cli/app.h): every
// command, option and description comes from the CLI11 app that --help prints, so the pages
// and the completions cannot drift from the binary. Pure functions of the app; the generator
// (docs_main.cpp) writes them to files for the packages.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace sparkdoc::cli {

// sparkdoc(1): what sparkdoc is, its commands, exit statuses, files; `date` is YYYY-MM-DD.
std::string man_page_main(const CLI::App& app, std::string_view version, std::string_view date);

// sparkdoc-NAME(1) for the command `command`: its description, synopsis, options and examples.
std::string man_page_command(const CLI::App& command, std::string_view summary,
                             std::string_view version, std::string_view date);

// A bash completion script (complete -F) and a zsh one (#compdef): commands, then each
// command's options; options that take a FILE, DIR or PATH complete file names.
std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);

// Text made safe for a roff line: backslashes, hyphens of options, leading dots and quotes.
std::string roff_escape(std::string_view text);

}  // namespace sparkdoc::cli
