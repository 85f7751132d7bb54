// What `sparkdoc plan ORG/NAME` needs of a model on the Hugging Face Hub, fetched without its
// weights: config.json, model.safetensors.index.json (or the single model.safetensors) and, of
// each shard, the 8-byte header length and the header, by two Range requests. Tensor data is
// never asked for; a server that ignores Range has its answer cut off after the bytes needed.
// What was fetched lands in sparkdoc's cache (hub/cache.h) as a folder `sparkdoc plan` reads
// like any checkpoint (its shards header-only), and a second fetch of the same revision reads
// that folder without the network.
//
// The environment, as huggingface_hub reads it: HF_ENDPOINT (default https://huggingface.co),
// HF_TOKEN (else the token file: HF_TOKEN_PATH, $HF_HOME/token, ~/.cache/huggingface/token),
// HF_HUB_OFFLINE (1, true, yes or on: never the network); CURL_CA_BUNDLE or REQUESTS_CA_BUNDLE
// for a CA file of a proxy's own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "hub/http.h"
#include "hub/model_id.h"

namespace sparkdoc::hub {

inline constexpr std::string_view kDefaultEndpoint = "https://huggingface.co";
// Bounds on what a server can make sparkdoc hold: config.json, the index, the shards an index
// may name, and the sum of their header lengths (each is also bounded by the format's 100 MB).
inline constexpr uint64_t kMaxConfigBytes = 16ull << 20;
inline constexpr uint64_t kMaxIndexBytes = 64ull << 20;
inline constexpr size_t kMaxShards = 4096;
inline constexpr uint64_t kMaxTotalHeaderBytes = 1ull << 30;

struct HubSettings {
  std::string endpoint = std::string(kDefaultEndpoint);  // without a trailing '/'
  bool offline = false;
  std::string cache_root;  // hub/cache.h cache_root_from_env
  std::string ca_bundle;
};

// The settings the environment gives (see above). Errors: HF_ENDPOINT is not an http or https
// URL of printable characters; no folder for the cache. The token is read only when a fetch
// goes to the network (read_token).
Result<HubSettings> settings_from_env();

struct Token {
  std::string value;   // "" when none is set
  std::string source;  // "HF_TOKEN", or the token file's path
};
// HF_TOKEN, else the token file; none is not an error, a token that is not one is.
Result<Token> read_token();

// Shard `shard` of `shards` is about to be fetched; `body_bytes` have come so far.
using FetchProgress = std::function<void(size_t shard, size_t shards, uint64_t body_bytes)>;

struct FetchOptions {
  bool refresh = false;  // fetch again even when the cache holds the revision
  bool offline = false;  // never the network (as HF_HUB_OFFLINE)
  HttpOptions http;      // timeouts and limits; endpoint, token and CA come from the settings
  FetchProgress progress;
};

struct FetchResult {
  std::string dir;  // the revision's folder in sparkdoc's cache: the checkpoint to plan
  std::string endpoint;
  bool from_cache = false;
  std::string commit;      // the commit the revision resolved to, when the Hub said
  std::string fetched_at;  // when the headers were fetched (ISO 8601 UTC)
  size_t shards = 0;
  Traffic traffic;  // of this call: zero when read from the cache
  // The shards' full sizes as the server gave them (Content-Range); 0 when it did not.
  uint64_t checkpoint_file_bytes = 0;
  bool range_ignored = false;  // the server answered a Range request with the whole file
  std::vector<std::string> notes;
};

// The headers of model `id`, from the cache or the Hub. Errors are sentences that say what to do:
// gated or private model (401/403), no such model, revision or safetensors file (404), rate
// limited (429, with Retry-After), the endpoint unreachable, TLS, libcurl missing, a hostile or
// broken answer (a header length past the format's limit, a body past the bounds above, a
// Content-Range that is not the range asked), offline and not cached. Why: kNoPermission for
// 401/403, kAbsent for 404 and not cached, kError otherwise.
Result<FetchResult> fetch_headers(const ModelId& id, const HubSettings& settings,
                                  const FetchOptions& options = {});

}  // namespace sparkdoc::hub
