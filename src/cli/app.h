// The sparkdoc command line as one CLI11 app: every command of the command table registered,
// with the formatter and the --version text. main parses and dispatches with it; the
// generator of man pages and shell completions (docs_main.cpp) reads the same app, so they
// say what --help says.
#pragma once

#include <functional>
#include <memory>
#include <vector>

namespace CLI {
class App;
}

namespace sparkdoc::cli {

struct Application {
  std::unique_ptr<CLI::App> app;
  std::vector<std::function<int()>> runs;  // runs[i] is kCommands[i]'s, when it was chosen
};

Application make_application();

}  // namespace sparkdoc::cli
