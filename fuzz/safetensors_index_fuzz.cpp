// model.safetensors.index.json: parse_index. Invariants on success: weight_map sorted with
// unique names, shards sorted and unique, every entry's shard among them.
#include <string>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "safetensors/index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto index = sparkdoc::safetensors::parse_index(text, "fuzz");
  if (!index) return 0;
  for (size_t i = 1; i < index->weight_map.size(); ++i) {
    if (!(index->weight_map[i - 1].first < index->weight_map[i].first)) __builtin_trap();
  }
  for (size_t i = 1; i < index->shards.size(); ++i) {
    if (!(index->shards[i - 1] < index->shards[i])) __builtin_trap();
  }
  for (const auto& [tensor, shard] : index->weight_map) {
    if (shard >= index->shards.size()) __builtin_trap();
    const std::string* named = index->shard_of(tensor);
    if (named == nullptr || *named != index->shards[shard]) __builtin_trap();
  }
  return 0;
}
