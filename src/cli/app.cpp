#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "core/build_info.h"
#include "core/version.h"
#include "model/snapshot.h"

namespace sparkdoc::cli {
namespace {

// `sparkdoc --help` lists each command with its one-line summary from the command table; the
// long description stays for `sparkdoc help NAME`.
class CommandListFormatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    for (const auto& command : kCommands) {
      if (command.name != sub->get_name()) continue;
      std::stringstream out;
      CLI::detail::format_help(out, sub->get_display_name(true), std::string(command.summary),
                               get_column_width());
      return out.str();
    }
    return CLI::Formatter::make_subcommand(sub);
  }
};

// `sparkdoc --version`: the version and what a bug report needs beside it.
std::string version_text() {
#if defined(__aarch64__)
  constexpr std::string_view kArch = "aarch64";
#elif defined(__x86_64__)
  constexpr std::string_view kArch = "x86_64";
#else
  constexpr std::string_view kArch = "other";
#endif
#if defined(__clang__)
  const std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = std::string("g++ ") + __VERSION__;
#else
  const std::string compiler = "an unknown compiler";
#endif
  return std::string("sparkdoc ") + kVersion + " (commit " + kGitCommit + ", built " + kBuildDate +
         ", " + std::string(kArch) + " Linux, built with " + compiler + "; snapshot schema " +
         std::to_string(kSnapshotSchemaVersion) +
         "; libcuda, libnvidia-ml and libcurl are opened at run time, never linked)";
}

}  // namespace

Application make_application() {
  Application made;
  made.app = std::make_unique<CLI::App>(
      "sparkdoc: preflight, explain and record a machine for ML training on NVIDIA DGX Spark "
      "(GB10) and any Linux machine with an NVIDIA GPU.\nWith no command, runs `check`.",
      "sparkdoc");
  CLI::App& app = *made.app;
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1, 1);
  app.fallthrough(false);
  app.formatter(std::make_shared<CommandListFormatter>());
  for (const Command& command : kCommands) made.runs.push_back(command.add(app));
  return made;
}

}  // namespace sparkdoc::cli
