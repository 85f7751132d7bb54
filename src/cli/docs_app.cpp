#include "cli/docs_app.h"

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace sparkdoc::cli::docs {

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::vector<const CLI::Option*> options_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> positionals_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<std::string> spellings(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& s : option.get_snames()) names.push_back("-" + s);
  for (const auto& l : option.get_lnames()) names.push_back("--" + l);
  return names;
}

bool takes_value(const CLI::Option& option) {
  return !option.get_type_name().empty() && option.get_expected_max() > 0;
}

ValueKind value_kind(const CLI::Option& option) {
  if (!takes_value(option)) return ValueKind::kNone;
  const std::string type = option.get_type_name();
  if (type.find("DIR") != std::string::npos) return ValueKind::kDirectory;
  if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos ||
      type.find("SNAP") != std::string::npos || type.find("LOG") != std::string::npos) {
    return ValueKind::kFile;
  }
  return ValueKind::kNone;
}

std::string value_name(const CLI::Option& option) {
  std::string type = option.get_type_name();
  if (auto eq = type.find('='); eq != std::string::npos) type.resize(eq);
  return type;
}

std::string_view summary_of(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return command.summary;
  }
  return {};
}

}  // namespace sparkdoc::cli::docs
