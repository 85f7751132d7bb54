// accelerate's cached default config. Even with no distributed variables set, accelerate
// turns on FSDP or DeepSpeed when this file says so (001 "Distributed Training Environment
// Cleanup"), so its presence and contents are recorded.
#pragma once

#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// The file accelerate reads by default, following accelerate's own rule:
// $HF_HOME/accelerate/default_config.yaml, else $XDG_CACHE_HOME/huggingface/accelerate/...,
// else $HOME/.cache/huggingface/accelerate/... An empty argument counts as unset; a leading
// "~" is expanded with home. "" when nothing can be derived (no HOME either).
std::string accelerate_config_path(std::string_view hf_home, std::string_view xdg_cache_home,
                                   std::string_view home);

// Parses the config text; path stays empty. Accepts the YAML `accelerate config` writes (a
// top-level mapping of "key: value" lines, nested blocks indented or as "- " items) and the
// JSON `write_basic_config` writes. Reads distributed_type (quotes removed; "" when missing),
// num_processes and num_machines (nullopt unless integers), and whether fsdp_config and
// deepspeed_config are top-level keys with non-empty content ("{}" and null are empty).
// Errors: binary or non-mapping text, a line that is not "key: value" at top level, or no keys.
Result<AccelerateConfig> parse_accelerate_config(std::string_view text);

// Reads <root><path>. When that file is missing, the default_config.json beside it is tried,
// which accelerate also falls back to. Absent when neither exists or path is "".
Result<AccelerateConfig> read_accelerate_config(const Root& root, const std::string& path);

}  // namespace sparkdoc::sys
