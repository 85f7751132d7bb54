// The readers of a job's non-Python files, each a pure function of the file's text. Every one
// accepts any text: what it cannot read it leaves out; none throws.
//
//   Dockerfile / Containerfile  instructions (continuation lines joined, comments dropped) and
//                               the commands of RUN lines (shell form, and exec form's JSON array)
//   requirements*.txt, freeze   one requirement per line (PEP 508: name[extras] specifier or
//                               name @ url; `-e url#egg=name`); options and comments skipped
//   pyproject.toml              [project] dependencies and optional-dependencies, dependency
//                               groups, tool.uv dev-dependencies, and `name = "spec"` tables
//                               (tool.poetry.dependencies and the like); every scalar as config
//   uv.lock                     each [[package]]'s name and version, pinned
//   YAML (configs, compose)     scalars by dotted key path: mappings, sequences (by index),
//                               flow lists split into items, quoted scalars, block scalars (| >)
//   JSON configs                scalars by dotted key path (DeepSpeed's ds_config.json)
//   CMakeCache.txt              NAME:TYPE=VALUE entries as config values keyed by NAME
//   Makefile                    the commands of recipe lines (tab-indented)
#pragma once

#include <string_view>
#include <vector>

#include "model/job.h"

namespace sparkdoc::job {

std::vector<DockerInstruction> parse_dockerfile(std::string_view text);
// The commands of the RUN instructions, with their lines.
std::vector<Command> dockerfile_commands(const std::vector<DockerInstruction>& instructions);

// One requirement string ("transformers==5.5.3", "peft>=0.14; python_version>'3.8'"); nullopt
// for what is not one.
std::optional<Requirement> parse_requirement(std::string_view text, uint32_t line = 0);
std::vector<Requirement> parse_requirements_txt(std::string_view text);

struct TomlRead {
  std::vector<Requirement> requirements;
  std::vector<ConfigValue> values;
};
TomlRead parse_pyproject(std::string_view text);
std::vector<Requirement> parse_uv_lock(std::string_view text);

std::vector<ConfigValue> parse_yaml(std::string_view text);
std::vector<ConfigValue> parse_json_config(std::string_view text);
std::vector<ConfigValue> parse_cmake_cache(std::string_view text);

std::vector<Command> makefile_commands(std::string_view text);

}  // namespace sparkdoc::job
