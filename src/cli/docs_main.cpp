// sparkdoc_docs OUTDIR: writes the man pages and shell completions of the sparkdoc command line
// (cli/docs.h) for the packages: OUTDIR/man1/sparkdoc.1 and sparkdoc-NAME.1 for each command,
// OUTDIR/bash-completion/sparkdoc and OUTDIR/zsh/_sparkdoc. Built beside the binary, not
// installed; scripts/package.sh runs it.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/docs.h"
#include "core/build_info.h"
#include "core/version.h"

namespace {

bool write(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "sparkdoc_docs: cannot write " << path.string() << " (" << std::strerror(errno)
              << ")\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparkdoc::cli;
  if (argc != 2) {
    std::cerr << "usage: sparkdoc_docs OUTDIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  Application application = make_application();
  const CLI::App& app = *application.app;
  bool ok = write(dir / "man1" / "sparkdoc.1",
                  man_page_main(app, sparkdoc::kVersion, sparkdoc::kBuildDate));
  for (const Command& command : kCommands) {
    const CLI::App* sub = app.get_subcommand(std::string(command.name));
    ok = write(dir / "man1" / ("sparkdoc-" + std::string(command.name) + ".1"),
               man_page_command(*sub, command.summary, sparkdoc::kVersion, sparkdoc::kBuildDate)) &&
         ok;
  }
  ok = write(dir / "bash-completion" / "sparkdoc", bash_completion(app)) && ok;
  ok = write(dir / "zsh" / "_sparkdoc", zsh_completion(app)) && ok;
  return ok ? 0 : 1;
}
