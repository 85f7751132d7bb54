#include "safetensors/index.h"

#include <algorithm>
#include <unordered_map>
#include <fmt/format.h>

#include "core/fs.h"
#include "safetensors/header.h"
#include "safetensors/json_cursor.h"

namespace sparkdoc::safetensors {
namespace {

using detail::JsonCursor;

bool safe_relative(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\0') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view part =
        name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == ".." || part.empty()) return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

}  // namespace

const std::string* ShardIndex::shard_of(std::string_view tensor) const {
  auto it = std::lower_bound(weight_map.begin(), weight_map.end(), tensor,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  if (it == weight_map.end() || it->first != tensor) return nullptr;
  return &shards[it->second];
}

Result<ShardIndex> parse_index(std::string_view text, std::string_view label) {
  auto bad = [&](std::string what) { return fail(fmt::format("{}: {}", label, what)); };
  if (!detail::valid_utf8(text)) return bad("not valid UTF-8");
  JsonCursor c(text);
  auto json_error = [&] { return bad("not valid JSON: " + c.error()); };
  ShardIndex index;
  // Shard names repeat for every tensor: keep each once, in order of appearance, then sort.
  std::unordered_map<std::string, uint32_t> shard_ids;
  index.label = std::string(label);
  if (!c.begin_object()) return json_error();
  bool seen_map = false, seen_meta = false;
  std::string key;
  while (c.next_member(key)) {
    if (key == "weight_map") {
      if (seen_map) return bad("duplicate key 'weight_map'");
      seen_map = true;
      if (c.peek_kind() != "an object") {
        return bad(fmt::format("weight_map must be an object, found {}", c.peek_kind()));
      }
      if (!c.begin_object()) return json_error();
      std::string tensor;
      while (c.next_member(tensor)) {
        if (c.peek_kind() != "a string") {
          return bad(fmt::format("weight_map entry '{}' must name a shard file, found {}", tensor,
                                 c.peek_kind()));
        }
        std::string shard;
        if (!c.read_string(shard)) return json_error();
        if (!safe_relative(shard)) {
          return bad(fmt::format("weight_map entry '{}' names '{}', which is not a file beside "
                                 "the index",
                                 tensor, shard));
        }
        auto [it, added] = shard_ids.try_emplace(shard, static_cast<uint32_t>(index.shards.size()));
        if (added) index.shards.push_back(std::move(shard));
        index.weight_map.emplace_back(std::move(tensor), it->second);
        tensor = std::string();
      }
      if (!c.done()) return json_error();
    } else if (key == "metadata") {
      if (seen_meta) return bad("duplicate key 'metadata'");
      seen_meta = true;
      if (c.at_null()) continue;
      if (c.peek_kind() != "an object") {
        return bad(fmt::format("metadata must be an object, found {}", c.peek_kind()));
      }
      if (!c.begin_object()) return json_error();
      std::string mkey;
      bool seen_total = false;
      while (c.next_member(mkey)) {
        if (mkey == "total_size") {
          if (seen_total) return bad("duplicate key 'total_size' in metadata");
          seen_total = true;
          // Some writers store a float here; only a whole number is taken.
          if (c.peek_kind() == "a number") {
            JsonCursor probe = c;
            uint64_t v;
            if (probe.read_u64(v)) {
              c = probe;
              index.total_size = v;
              continue;
            }
          }
        }
        if (!c.skip_value()) return json_error();
      }
      if (!c.done()) return json_error();
    } else {
      if (!c.skip_value()) return json_error();
    }
  }
  if (!c.done() || !c.at_end()) return json_error();
  if (!seen_map) return bad("no weight_map");
  // Writers usually emit weight_map sorted (transformers dumps with sort_keys); check first.
  auto by_tensor = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(index.weight_map.begin(), index.weight_map.end(), by_tensor)) {
    std::sort(index.weight_map.begin(), index.weight_map.end(), by_tensor);
  }
  for (size_t i = 1; i < index.weight_map.size(); ++i) {
    if (index.weight_map[i].first == index.weight_map[i - 1].first) {
      return bad(fmt::format("tensor '{}' is listed twice in weight_map",
                             index.weight_map[i].first));
    }
  }
  std::vector<uint32_t> order(index.shards.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return index.shards[a] < index.shards[b]; });
  std::vector<uint32_t> rank(order.size());
  std::vector<std::string> sorted;
  for (uint32_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = i;
    sorted.push_back(std::move(index.shards[order[i]]));
  }
  index.shards = std::move(sorted);
  for (auto& entry : index.weight_map) entry.second = rank[entry.second];
  return index;
}

Result<ShardIndex> read_index(const std::string& path) {
  auto text = read_file(path, kMaxIndexBytes);
  if (!text) return tl::unexpected(text.error());
  return parse_index(*text, path);
}

}  // namespace sparkdoc::safetensors
