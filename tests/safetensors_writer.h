// Writes small safetensors files for tests: a header computed from names, dtypes and shapes
// (offsets contiguous, in the given order), and either all data (zeros), no data (header only)
// or a sparse file of the full size (ftruncate, nothing written past the header).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "safetensors/dtype.h"

namespace sparkdoc::testing {

struct WriteTensor {
  std::string name;
  std::string dtype = "BF16";
  std::vector<uint64_t> shape;
};

enum class DataMode { kZeros, kHeaderOnly, kSparse };

// The header JSON for `tensors` (contiguous offsets in order) and its data size.
inline std::pair<std::string, uint64_t> header_json(
    const std::vector<WriteTensor>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  // Built as text: ordered_json looks keys up linearly, too slow for 30,000 tensors.
  std::string j = "{";
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    j += "\"__metadata__\":" + m.dump();
  }
  uint64_t at = 0;
  for (const auto& t : tensors) {
    uint64_t numel = 1;
    for (auto d : t.shape) numel *= d;
    auto dtype = safetensors::dtype_from_name(t.dtype);
    uint64_t bytes = dtype ? safetensors::dtype_bytes(*dtype, numel).value_or(0) : numel * 2;
    if (j.size() > 1) j += ",";
    j += nlohmann::json(t.name).dump() + ":{\"dtype\":\"" + t.dtype + "\",\"shape\":" +
         nlohmann::json(t.shape).dump() + ",\"data_offsets\":[" + std::to_string(at) + "," +
         std::to_string(at + bytes) + "]}";
    at += bytes;
  }
  j += "}";
  return {j, at};
}

// 8-byte length + JSON padded with spaces to a multiple of 8, as the reference writer does.
inline std::string header_bytes(const std::string& json) {
  std::string padded = json;
  while (padded.size() % 8 != 0) padded.push_back(' ');
  std::string out(8, '\0');
  uint64_t n = padded.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + padded;
}

inline void write_safetensors(const std::filesystem::path& path,
                              const std::vector<WriteTensor>& tensors,
                              DataMode mode = DataMode::kSparse,
                              const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  auto [json, data] = header_json(tensors, metadata);
  std::string head = header_bytes(json);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << head;
    if (mode == DataMode::kZeros) out << std::string(data, '\0');
  }
  if (mode == DataMode::kSparse) {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd >= 0) {
      if (::ftruncate(fd, static_cast<off_t>(head.size() + data)) != 0) {
      }
      ::close(fd);
    }
  }
}

// An index beside the shards: weight_map from each shard's tensors.
inline void write_index(const std::filesystem::path& path,
                        const std::vector<std::pair<std::string, std::vector<WriteTensor>>>& shards,
                        uint64_t total_size) {
  std::string map;
  for (const auto& [file, tensors] : shards) {
    for (const auto& t : tensors) {
      if (!map.empty()) map += ",\n    ";
      map += nlohmann::json(t.name).dump() + ": " + nlohmann::json(file).dump();
    }
  }
  std::ofstream(path) << "{\n  \"metadata\": {\"total_size\": " << total_size
                      << "},\n  \"weight_map\": {\n    " << map << "\n  }\n}\n";
}

}  // namespace sparkdoc::testing
