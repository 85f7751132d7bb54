// The hidden --root option of the commands that read (and clean, write) the machine's /proc,
// /sys and /dev: a fixture tree in tests. A privileged process takes it only when root owns the
// folder and no one else can write it (core/fs.h check_root_may_trust): under sudo, a user's
// tree of links would otherwise steer root's reads and writes.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace sparkdoc::cli {

CLI::Option* add_root_option(CLI::App& command, std::string& root, const std::string& help);

}  // namespace sparkdoc::cli
