// model.safetensors.index.json: the transformers convention for sharded checkpoints (not part
// of the format itself): {"metadata": {"total_size": N, ...}, "weight_map": {tensor: shard}}.
// Strict: valid UTF-8 JSON, no duplicate tensor names, shard names relative to the index's
// folder (no absolute paths, no '..'). Other metadata members are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace sparkdoc::safetensors {

inline constexpr uint64_t kMaxIndexBytes = 256ull << 20;

struct ShardIndex {
  std::string label;  // the index's path as given, for messages
  std::optional<uint64_t> total_size;  // metadata.total_size when it is a whole number
  std::vector<std::string> shards;  // distinct shard names, sorted
  // tensor -> index into shards, sorted by tensor name
  std::vector<std::pair<std::string, uint32_t>> weight_map;
  // The shard of a tensor, or nullptr.
  const std::string* shard_of(std::string_view tensor) const;
};

Result<ShardIndex> parse_index(std::string_view text, std::string_view label = "index");
Result<ShardIndex> read_index(const std::string& path);

}  // namespace sparkdoc::safetensors
