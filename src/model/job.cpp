#include "model/job.h"

namespace sparkdoc::job {

std::optional<size_t> Command::find(std::string_view word) const {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == word) return i;
  }
  return std::nullopt;
}

bool Command::has_pair(std::string_view a, std::string_view b) const {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == a && argv[i + 1] == b) return true;
  }
  return false;
}

std::optional<std::string> Command::option(std::initializer_list<std::string_view> names) const {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string_view w = argv[i];
    for (std::string_view n : names) {
      if (w == n) {
        if (i + 1 < argv.size()) return argv[i + 1];
        return std::string();
      }
      if (n.starts_with("--") && w.size() > n.size() && w.starts_with(n) && w[n.size()] == '=') {
        return std::string(w.substr(n.size() + 1));
      }
    }
  }
  return std::nullopt;
}

bool Command::flag(std::initializer_list<std::string_view> names) const {
  for (const std::string& w : argv) {
    for (std::string_view n : names) {
      if (w == n ||
          (w.size() > n.size() && std::string_view(w).starts_with(n) && w[n.size()] == '=')) {
        return true;
      }
    }
  }
  return false;
}

std::optional<std::string> Command::env_value(std::string_view name) const {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::optional<std::string> Requirement::pinned() const {
  std::string_view s = specifier;
  if (s.starts_with("==="))
    s.remove_prefix(3);
  else if (s.starts_with("=="))
    s.remove_prefix(2);
  else
    return std::nullopt;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty() || s.find_first_of(",*;") != std::string_view::npos) return std::nullopt;
  return std::string(s);
}

std::string_view file_kind_name(FileKind kind) {
  switch (kind) {
    case FileKind::kPython:
      return "python";
    case FileKind::kDockerfile:
      return "dockerfile";
    case FileKind::kCompose:
      return "compose";
    case FileKind::kShell:
      return "shell";
    case FileKind::kMakefile:
      return "makefile";
    case FileKind::kRequirements:
      return "requirements";
    case FileKind::kPyproject:
      return "pyproject";
    case FileKind::kUvLock:
      return "uv.lock";
    case FileKind::kConfig:
      return "config";
    case FileKind::kCMakeCache:
      return "cmake-cache";
    case FileKind::kCommandLine:
      return "command-line";
  }
  return "?";
}

}  // namespace sparkdoc::job
