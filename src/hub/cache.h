// sparkdoc's cache of what it fetched from the Hub: config.json, the shard index and each shard
// as a header-only safetensors file (the 8-byte length and the header, no tensor data), in
//   ROOT/hub/models--ORG--NAME/REVISION/
// ROOT is $SPARKDOC_CACHE, else $XDG_CACHE_HOME/sparkdoc, else ~/.cache/sparkdoc
// (core/cache_dir.h cache_root_from_env, the rule the audit's cache shares). Not Hugging
// Face's cache: transformers would take a header-only shard there for the checkpoint.
//
// A revision's folder is filled under a new name beside it and renamed into place whole, its
// marker (kMarkerName) written last: a folder at REVISION with its marker is complete, and a
// fetch that died half-way leaves nothing at REVISION. Folders are made and opened without
// following links and must belong to the user running sparkdoc (core/fs.h); files are created
// new (O_EXCL|O_NOFOLLOW).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/cache_dir.h"
#include "core/fs.h"
#include "core/result.h"
#include "hub/model_id.h"

namespace sparkdoc::hub {

inline constexpr std::string_view kMarkerName = ".complete";

// What the marker records of a fetch, shown when a later plan reads the cache.
struct CacheMarker {
  std::string endpoint;    // "https://huggingface.co"
  std::string commit;      // the commit the revision resolved to, when the Hub said; else ""
  std::string fetched_at;  // ISO 8601 UTC
  uint64_t shards = 0;
  uint64_t body_bytes = 0;
  uint64_t checkpoint_file_bytes = 0;  // the shards' sizes on the server; 0 when not known
  bool operator==(const CacheMarker&) const = default;
};
std::string render_cache_marker(const CacheMarker& marker);
// The marker's JSON object; nullopt when it is not one. Members of the wrong type read as
// empty (the marker only tells a person where the headers came from).
std::optional<CacheMarker> parse_cache_marker(std::string_view text);

// A revision's folder being filled: files land in it under their own names, and commit() puts
// it in place of the revision. Dropped without commit, it is removed.
class Staging {
 public:
  Staging(Staging&& other) noexcept;
  Staging& operator=(Staging&&) = delete;
  ~Staging();

  // Writes a new file `name` (a plain file name) into the folder.
  Result<void> write(std::string_view name, std::string_view contents);
  const std::string& path() const { return dir_.path; }

 private:
  friend class ModelCache;
  Staging(Dir parent, Dir dir, std::string name);
  Dir parent_;  // the model's folder (its own descriptor)
  Dir dir_;
  std::string name_;  // its name in parent_
  bool committed_ = false;
};

// One model's folder in the cache, made on first use.
class ModelCache {
 public:
  static Result<ModelCache> open(const std::string& root, const ModelId& id);

  // The revision's folder, when a complete fetch is there; else nullopt.
  std::optional<std::string> complete(std::string_view revision) const;
  // The marker of a complete revision; nullopt when absent or unreadable.
  std::optional<CacheMarker> marker(std::string_view revision) const;
  // A new folder to fill for `revision`.
  Result<Staging> stage(std::string_view revision) const;
  // Writes the marker into `staging` and puts the folder in place of the revision's, replacing
  // what was there (a stale or an older fetch). Returns the revision folder's path.
  Result<std::string> commit(Staging& staging, std::string_view revision,
                             const CacheMarker& marker) const;

  // ROOT/hub/models--ORG--NAME.
  const std::string& path() const { return dir_.path; }

 private:
  explicit ModelCache(Dir dir) : dir_(std::move(dir)) {}
  Dir dir_;
};

}  // namespace sparkdoc::hub
