#include "cli/root_option.h"

#include "core/fs.h"

namespace sparkdoc::cli {

CLI::Option* add_root_option(CLI::App& command, std::string& root, const std::string& help) {
  return command.add_option("--root", root, help)
      ->group("")
      ->check(CLI::Validator(
          [](std::string& folder) -> std::string {
            if (!running_privileged()) return "";
            auto trusted = check_root_may_trust(folder);
            return trusted ? std::string()
                           : "refused as root: " + trusted.error().message +
                                 " (a --root tree must belong to root and be writable by no one "
                                 "else)";
          },
          "DIR", "root-owned folder"));
}

}  // namespace sparkdoc::cli
