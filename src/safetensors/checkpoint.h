// A checkpoint: one safetensors file, or the shards an index names, or every *.safetensors file
// of a folder, resolved from a path that may also be a Hugging Face cache entry
// (models--org--name, or its snapshots/<revision>). Every shard's header is read and validated;
// the index and the shards must agree exactly (each tensor in the shard the index names, no
// tensor in two shards, no shard tensor missing from the index).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "safetensors/dtype.h"
#include "safetensors/header.h"

namespace sparkdoc::safetensors {

inline constexpr std::string_view kIndexFileName = "model.safetensors.index.json";
inline constexpr std::string_view kSingleFileName = "model.safetensors";

struct Shard {
  std::string path;
  std::string name;             // relative to the model folder
  uint64_t file_bytes = 0;
  uint64_t header_bytes = 0;    // N
  uint64_t data_bytes = 0;
  bool data_present = false;    // the file holds all its data (not header-only or cut off)
  size_t tensor_count = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct CheckpointTensor {
  std::string name;
  uint32_t shard = 0;       // index into Checkpoint::shards
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t offset = 0;      // absolute byte offset of the data in the shard file
  uint64_t bytes = 0;
  uint64_t numel() const;
};

struct Checkpoint {
  std::string dir;                       // the model folder (config.json lives here)
  std::optional<std::string> index_path; // when sharded through an index
  std::string resolved_from;             // how the input path was resolved, for reports
  std::vector<Shard> shards;             // in index (sorted) or file-name order
  std::vector<CheckpointTensor> tensors; // by shard, then by offset
  std::vector<std::string> notes;        // non-fatal observations (index total_size mismatch, ...)
  uint64_t data_bytes() const;
  uint64_t file_bytes() const;
  const CheckpointTensor* find(std::string_view name) const;

  std::vector<uint32_t> by_name;  // indexes into tensors, sorted by name
};

// The model folder a path means: the folder itself; the folder of a file; for a Hugging Face
// cache entry (…/models--org--name) the snapshot refs/main points to, or its only snapshot.
// `how` receives a sentence for reports ("snapshot abc123 of models--org--name (refs/main)").
Result<std::string> resolve_model_dir(const std::string& path, std::string* how = nullptr);

// Opens the checkpoint at `path`: a .safetensors file, an index .json file, a model folder or a
// cache entry. Only headers are read.
Result<Checkpoint> open_checkpoint(const std::string& path, const HeaderOptions& options = {});

}  // namespace sparkdoc::safetensors
