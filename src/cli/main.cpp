// sparkdoc: a doctor for ML training on DGX Spark and any Linux machine with an NVIDIA GPU.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"

namespace {

// glibc gives each thread that allocates its own malloc arena, with about a megabyte of touched
// memory apiece: the audit's reader threads (in check, snapshot, audit and run's preflight) and
// NVML's threads. Two arenas serve these short, mostly single-threaded commands as fast: the
// audit of an 879-file tree with four readers peaked at 12.7 MB (median of seven) with glibc's
// default and 11.4 MB with two arenas, in the same 0.06-0.07 s (docs/BENCHMARKS.md). load and
// bw, whose threads move data, keep glibc's default.
void limit_malloc_arenas() {
  mallopt(M_ARENA_MAX, 2);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparkdoc::cli;
  // No escape sequence from a file or another process reaches the terminal (cli/terminal_text.h).
  TerminalText shown_out(std::cout);
  TerminalText shown_err(std::cerr);
  // `sparkdoc` and `sparkdoc --json ...` mean `sparkdoc check ...`.
  std::vector<std::string> args(argv, argv + argc);
  // `sparkdoc help` and `sparkdoc help run`, as git has them.
  if (args.size() > 1 && args[1] == "help") {
    if (args.size() > 2) {
      args.erase(args.begin() + 1);
      args.insert(args.begin() + 2, "--help");
    } else {
      args[1] = "--help";
    }
  }
  if (args.size() == 1 ||
      (args[1].size() > 1 && args[1][0] == '-' && args[1] != "--help" && args[1] != "-h" &&
       args[1] != "--version")) {
    args.insert(args.begin() + 1, "check");
  }
  try {
    Application application = make_application();
    CLI::App& app = *application.app;
    const std::vector<std::function<int()>>& runs = application.runs;
    // CLI11 would answer "A subcommand is required" to a misspelt command.
    std::string names;
    bool known = false;
    for (const Command& command : kCommands) {
      names += (names.empty() ? "" : ", ") + std::string(command.name);
      known = known || app.get_subcommand(std::string(command.name))->check_name(args[1]);
    }
    if (!known && (args[1].empty() || args[1][0] != '-')) {
      std::cerr << "sparkdoc: unknown command '" << args[1] << "'; the commands are " << names
                << " (sparkdoc --help)\n";
      return kExitUsage;
    }
    std::vector<const char*> cargs;
    for (auto& a : args) cargs.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(cargs.size()), cargs.data());
    } catch (const CLI::ParseError& e) {
      // --help and --version are CLI11's "errors" with exit code 0; the rest are usage errors,
      // said the way every sparkdoc message is: the command first, then what to read.
      if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitReady : kExitUsage;
      std::string command = known ? args[1] : std::string();
      std::cerr << "sparkdoc" << (command.empty() ? "" : " " + command) << ": " << e.what()
                << " (sparkdoc " << (command.empty() ? "" : command + " ") << "--help)\n";
      return kExitUsage;
    }
    for (size_t i = 0; i < std::size(kCommands); ++i) {
      if (!app.got_subcommand(std::string(kCommands[i].name))) continue;
      if (!kCommands[i].keeps_malloc_arenas) limit_malloc_arenas();
      notice_unrestored_journal(app);
      const int status = runs[i]();
      // A report that did not reach its file (`check > /dev/full`, a full disk) is no report:
      // say so and exit 2 rather than 0. `run` is exempt: its status is the command's, and a
      // closed stdout must not change it.
      std::cout.flush();
      if (!std::cout && std::string_view(kCommands[i].name) != "run") {
        std::cerr << "sparkdoc: the output could not be written (" << std::strerror(errno) << ")\n";
        return kExitUsage;
      }
      return status;
    }
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "sparkdoc: internal error: " << e.what() << "\n";
    return kExitUsage;
  } catch (...) {
    std::cerr << "sparkdoc: internal error\n";
    return kExitUsage;
  }
}
