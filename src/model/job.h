// What sparkdoc reads of a training job's files without running anything (the job probe reads
// them; the lint rules in src/checks judge them): Python scripts, container recipes and compose
// files, shell scripts and Makefiles, requirement files and lockfiles, accelerate / DeepSpeed /
// TRL configurations, llama.cpp's CMakeCache.txt and launch command lines.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/python_source.h"

namespace sparkdoc::job {

// One simple command of a shell line (a Dockerfile RUN, a script, a Makefile recipe, a compose
// `command:`, --cmd): its words after quote removal, with the `NAME=value` assignments written
// before it. `sudo`, `env`, `ionice` and the like stay in argv as written.
struct Command {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string text;  // the whole line it came from, continuation lines joined
  uint32_t line = 0;
  bool operator==(const Command&) const = default;

  // Index of the first word equal to `word`; nullopt when none.
  std::optional<size_t> find(std::string_view word) const;
  // Whether argv holds `a` directly followed by `b` ("docker" "run", "pip" "install").
  bool has_pair(std::string_view a, std::string_view b) const;
  // The value of an option: "--flag V", "--flag=V", or for single-dash short flags "-n V";
  // nullopt when absent. `names` are alternatives ("--ctx-size", "-c").
  std::optional<std::string> option(std::initializer_list<std::string_view> names) const;
  bool flag(std::initializer_list<std::string_view> names) const;
  // The value of a NAME=value written before the command; nullopt when none.
  std::optional<std::string> env_value(std::string_view name) const;
};

// One instruction of a Dockerfile or Containerfile ("RUN", "ENV", "FROM" ...).
struct DockerInstruction {
  std::string keyword;  // upper case
  std::string args;     // the rest, continuation lines joined
  uint32_t line = 0;
  bool operator==(const DockerInstruction&) const = default;
};

// A requirement or a locked version: requirements*.txt, pip freeze output, pyproject.toml's
// dependency lists and tables, uv.lock's packages.
struct Requirement {
  std::string name;       // PEP 503 normalised
  std::string specifier;  // "==5.5.3", ">=0.14", "" when unpinned; "@ git+https://..." for URLs
  uint32_t line = 0;
  bool operator==(const Requirement&) const = default;
  // The exact version of a "==X" specifier (or a lockfile's version); nullopt otherwise.
  std::optional<std::string> pinned() const;
};

// A scalar of a YAML or TOML configuration, by its dotted key path ("fsdp_config.version",
// "services.train.ipc", "services.train.environment.0").
struct ConfigValue {
  std::string key;
  std::string value;
  uint32_t line = 0;
  bool operator==(const ConfigValue&) const = default;
};

enum class FileKind : uint8_t {
  kPython,
  kDockerfile,
  kCompose,
  kShell,
  kMakefile,
  kRequirements,  // requirements*.txt, constraints, pip freeze output
  kPyproject,
  kUvLock,
  kConfig,  // accelerate / DeepSpeed / TRL YAML or JSON
  kCMakeCache,
  kCommandLine,  // --cmd "..."
};
std::string_view file_kind_name(FileKind kind);  // "python", "dockerfile", ...

struct JobFile {
  std::string path;  // as given or relative to the folder linted
  FileKind kind = FileKind::kPython;
  std::string error;                      // could not be read; nothing else is then
  PySource python;                        // kPython
  std::vector<DockerInstruction> docker;  // kDockerfile
  std::vector<Command> commands;          // shell lines of every kind of file
  std::vector<Requirement> requirements;  // kRequirements, kPyproject, kUvLock
  std::vector<ConfigValue> config;        // kConfig, kCompose, kPyproject; CMakeCache entries
  // Lines whose comment says "sparkdoc: ignore ID[,ID...]", with the IDs not to report there
  // (every kind of file; a comment on a line of its own covers the line below too).
  std::map<uint32_t, std::vector<std::string>> ignored;
};

struct Job {
  std::vector<std::string> roots;  // what was linted
  std::vector<JobFile> files;
  std::vector<std::string> skipped;  // "path: why" for files found but not read
};

}  // namespace sparkdoc::job
