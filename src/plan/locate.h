// The model `sparkdoc plan` is asked about, found and read: a path, or "org/name" looked up in
// the Hugging Face cache, then its safetensors headers and the config.json beside them, then
// planned (plan/plan.h). Reads files and the cache's environment variables; nothing else.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "plan/plan.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::plan {

// Where Hugging Face keeps its cache, in the order it looks: $HF_HUB_CACHE, $HF_HOME/hub,
// ~/.cache/huggingface/hub (those whose variables are set).
std::vector<std::string> hub_cache_roots();

// `model` itself when it exists here or is not "org/name"; else the first cache entry
// models--org--name under `roots` that is a folder; else `model`.
std::string locate_model(const std::string& model, const std::vector<std::string>& roots);

// The snapshot of `revision` in the cache entry models--org--name of "org/name" under `roots`:
// the commit refs/<revision> names, or snapshots/<revision> itself (a commit hash); nullopt when
// no root holds it. `revision` is a plain name (no '/', no "..").
std::optional<std::string> locate_revision(const std::string& model, const std::string& revision,
                                           const std::vector<std::string>& roots);

// The plan for the checkpoint at `path` (a folder, a shard, an index or a cache entry) and its
// config.json. Errors: the checkpoint cannot be read, config.json is missing or invalid (the
// message says it is needed), or make_plan's.
Result<Plan> plan_model(const std::string& path, const safetensors::HeaderOptions& options,
                        const PlanRequest& request);

}  // namespace sparkdoc::plan
