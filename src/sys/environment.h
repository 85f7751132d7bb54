// Environment variables. Only the variables the checks judge leave the machine: the snapshot
// is meant to be attached to bug reports, and an environment carries tokens and keys.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sparkdoc::sys {

// True for a variable the snapshot records (the one table in environment.cpp).
bool is_recorded_env(std::string_view name);

// The recorded variables of an environ-style array ("NAME=value" strings, nullptr-terminated).
// envp == nullptr gives an empty map; the caller passes ::environ for the live process. When a
// name appears twice the first wins, as getenv() does.
std::map<std::string, std::string> recorded_environment(char** envp);

// Every variable of /proc/PID/environ text (NUL-separated "NAME=value" entries); entries
// without '=' or with an empty name are skipped; the first of duplicate names wins. Not
// filtered: callers keep only what they need (recorded_only below, or a single lookup).
std::map<std::string, std::string> parse_environ(std::string_view nul_separated);

// The recorded subset of a parsed environment.
std::map<std::string, std::string> recorded_only(const std::map<std::string, std::string>& env);

// The value of one variable in an environ-style array; nullopt when unset or envp is nullptr.
std::optional<std::string> find_env(char** envp, std::string_view name);

}  // namespace sparkdoc::sys
