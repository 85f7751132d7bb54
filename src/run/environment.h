// The environment `sparkdoc run` gives the command: the launch-state and distributed variables
// of 001 removed (unless --distributed), accelerate's FSDP and DeepSpeed switches forced off,
// and the allocator and tokenizer defaults of 000 §4 and 001 added where the user set none.
// The rules themselves are facts/environment.h, shared with the S1-S4 checks. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sparkdoc::run {

struct EnvPlan {
  std::vector<std::string> removed;        // names, sorted
  std::map<std::string, std::string> set;  // what sparkdoc set, with the value
  std::vector<std::string> kept;           // defaults not applied: the user's own value stays
  std::vector<std::string> entries;        // the result, "NAME=value", in the input's order,
                                           // then what was added in name order
};

// envp: an environ-style array ("NAME=value" strings, nullptr-terminated); nullptr is empty.
// An entry without '=' or with an empty name is dropped; of duplicate names the first wins, as
// getenv() reads them.
EnvPlan plan_environment(char** envp, bool distributed);

}  // namespace sparkdoc::run
