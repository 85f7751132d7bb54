#include "hub/fetch.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "core/fs.h"
#include "core/printable.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "hub/cache.h"
#include "safetensors/checkpoint.h"
#include "safetensors/header.h"
#include "safetensors/index.h"

namespace sparkdoc::hub {
namespace {

constexpr size_t kMaxTokenFileBytes = 64 * 1024;

// huggingface_hub's reading of a boolean variable.
bool truthy(const char* value) {
  if (value == nullptr) return false;
  const std::string v = to_lower(trim(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

// A file name as a URL path segment: unreserved characters as they are, every other byte as %XX.
std::string percent_encoded(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// Why a shard the index names cannot become a file beside it in the cache, or "".
std::string shard_name_problem(std::string_view name) {
  if (name.empty() || name.size() > 255) return "is no file name of 1 to 255 bytes";
  if (name.find('/') != std::string_view::npos) {
    return "is in a subfolder (sparkdoc fetches shards that sit beside the index)";
  }
  if (name.front() == '.') return "starts with '.'";
  for (char c : name) {
    if (c < ' ' || c == 0x7f) return "holds a control character";
  }
  if (!ends_with(name, ".safetensors")) return "does not end in .safetensors";
  return "";
}

// One fetch's shared state: where to ask, and what to say in errors.
struct Context {
  const ModelId& id;
  const HubSettings& settings;
  const Token& token;

  std::string url(std::string_view file) const {
    return fmt::format("{}/{}/{}/resolve/{}/{}", settings.endpoint, id.org, id.name, id.revision,
                       percent_encoded(file));
  }
  std::string page() const { return fmt::format("{}/{}", settings.endpoint, id.repo()); }
};

// The sentence for an HTTP status that is not the one asked for. `missing` is what a plain 404
// of this file means.
tl::unexpected<Error> status_failure(const Response& r, const Context& c, const std::string& url,
                                     std::string_view missing) {
  const std::string repo = c.id.repo();
  std::string head = fmt::format("{} answered {} to GET {}", c.settings.endpoint, r.status, url);
  if (!r.error_message.empty()) head += fmt::format(" (\"{}\")", printable(r.error_message));
  const std::string tokens = c.settings.endpoint + "/settings/tokens";
  const std::string set_token =
      c.token.value.empty()
          ? fmt::format("set HF_TOKEN to a read token from {}", tokens)
          : fmt::format(
                "check that the token from {} belongs to that account and may read "
                "gated models (a fine-grained token needs that box ticked; {})",
                c.token.source, tokens);
  if (r.error_code == "GatedRepo" || r.status == 403) {
    return fail(Why::kNoPermission,
                fmt::format("{}: {} is a gated or private model this account may not read yet: "
                            "accept its terms on {} (some authors approve each request), then {}",
                            head, repo, c.page(), set_token));
  }
  if (r.status == 401) {
    if (r.error_code == "RepoNotFound") {
      return fail(Why::kNoPermission,
                  fmt::format("{}: there is no model {} on {}, or it is private: check the name, "
                              "or {}",
                              head, repo, c.settings.endpoint, set_token));
    }
    if (!c.token.value.empty()) {
      return fail(Why::kNoPermission,
                  fmt::format("{}: the token from {} was refused (expired, revoked or mistyped?): "
                              "make a read token at {} and set HF_TOKEN",
                              head, c.token.source, tokens));
    }
    return fail(Why::kNoPermission,
                fmt::format("{}: {} is gated or private, or there is no such model (without a "
                            "token the Hub answers 401 to all three): if it exists, accept its "
                            "terms on {} and {}",
                            head, repo, c.page(), set_token));
  }
  if (r.status == 404) {
    if (r.error_code == "RevisionNotFound") {
      return fail(Why::kAbsent,
                  fmt::format("{}: {} has no revision {}: name a branch, a tag or a commit that "
                              "{}/tree/main lists (--revision REV, or {}@REV)",
                              head, repo, c.id.revision, c.page(), repo));
    }
    if (r.error_code == "RepoNotFound") {
      return fail(Why::kAbsent,
                  fmt::format("{}: there is no model {} on {} (check the name; a private model "
                              "also needs HF_TOKEN)",
                              head, repo, c.settings.endpoint));
    }
    return fail(Why::kAbsent, fmt::format("{}: {}", head, missing));
  }
  if (r.status == 429) {
    return fail(fmt::format(
        "{}: rate limited (429 Too Many Requests){}; requests with a token (HF_TOKEN) get a "
        "higher limit",
        head, r.retry_after.empty() ? "; wait and try again" : "; retry after " + r.retry_after));
  }
  if (r.status == 416) {
    return fail(
        fmt::format("{}: the file is shorter than the bytes asked (416 Range Not "
                    "Satisfiable), so it is not the safetensors file its name says",
                    head));
  }
  if (r.status >= 500) {
    return fail(
        fmt::format("{}: the server failed; try again later, or set HF_ENDPOINT to a "
                    "mirror",
                    head));
  }
  return fail(fmt::format("{}: sparkdoc expects 200 or 206 here", head));
}

// A whole small file (config.json, the index): 200 and at most `max_bytes`.
Result<Response> fetch_small(Client& client, const Context& c, std::string_view file,
                             uint64_t max_bytes, std::string_view missing) {
  const std::string url = c.url(file);
  auto r = client.get(url, std::nullopt, max_bytes);
  if (!r) return tl::unexpected(std::move(r.error()));
  if (r->status != 200) return status_failure(*r, c, url, missing);
  if (r->cut) {
    return fail(fmt::format("GET {}: more than {} of {}, far more than any real one; not read", url,
                            format_binary(max_bytes), file));
  }
  return r;
}

struct Piece {
  std::string bytes;
  std::optional<uint64_t> file_bytes;  // the whole file's size, when the answer says
};

// The bytes [first, first + count) of a shard. A 206 must carry exactly that range; a 200 (a
// server that ignores Range) has its body from byte 0, cut once first + count bytes have come.
Result<Piece> fetch_range(Client& client, const Context& c, const std::string& url, uint64_t first,
                          uint64_t count, std::string_view missing, bool& range_ignored) {
  const ByteRange range{first, first + count - 1};
  auto r = client.get(url, range, first + count);
  if (!r) return tl::unexpected(std::move(r.error()));
  if (r->status == 206) {
    const auto& got = r->content_range;
    if (!got || got->first != range.first || got->last != range.last) {
      return fail(
          fmt::format("GET {}: bytes {}-{} were asked for, and the answer is {}; not a "
                      "server sparkdoc can read headers from",
                      url, range.first, range.last,
                      got ? fmt::format("bytes {}-{}", got->first, got->last)
                          : std::string("without a valid Content-Range")));
    }
    if (r->body.size() != count) {
      return fail(fmt::format("GET {}: bytes {}-{} announced, {} bytes came instead of {}", url,
                              range.first, range.last, r->body.size(), count));
    }
    return Piece{std::move(r->body), got->complete};
  }
  if (r->status == 200) {
    range_ignored = true;
    if (r->body.size() < first + count) {
      return fail(
          fmt::format("GET {}: the file is {} bytes, too short for the {} bytes its "
                      "safetensors header needs",
                      url, r->body.size(), first + count));
    }
    std::optional<uint64_t> whole;
    if (!r->cut) whole = r->body.size();
    return Piece{r->body.substr(static_cast<size_t>(first), static_cast<size_t>(count)), whole};
  }
  return status_failure(*r, c, url, missing);
}

// What fetch_headers gathers as it goes.
struct Progress {
  FetchResult& result;
  uint64_t header_total = 0;  // the sum of N over the shards so far
  bool sizes_known = true;    // every shard's full size came with its answer
};

// One shard's length and header, checked and written into the staging folder as a header-only
// safetensors file.
Result<void> fetch_shard(Client& client, const Context& c, const std::string& shard,
                         std::string_view missing, Staging& staging, Progress& p) {
  const std::string url = c.url(shard);
  const std::string label = fmt::format("{} of {}", shard, c.id.label());
  bool& ignored = p.result.range_ignored;
  auto prefix = fetch_range(client, c, url, 0, safetensors::kLengthPrefixBytes, missing, ignored);
  if (!prefix) return tl::unexpected(std::move(prefix.error()));
  auto n = safetensors::parse_header_length(prefix->bytes, prefix->file_bytes.value_or(UINT64_MAX),
                                            label);
  if (!n) return tl::unexpected(std::move(n.error()));
  if (*n == 0) return fail(fmt::format("{}: a header length of 0; not a safetensors file", label));
  p.header_total += *n;
  if (p.header_total > kMaxTotalHeaderBytes) {
    return fail(
        fmt::format("{}: the shards' headers pass {} in all, far more than any real "
                    "checkpoint's; not fetched",
                    label, format_binary(kMaxTotalHeaderBytes)));
  }
  auto header = fetch_range(client, c, url, safetensors::kLengthPrefixBytes, *n, missing, ignored);
  if (!header) return tl::unexpected(std::move(header.error()));
  std::string bytes = prefix->bytes + header->bytes;
  auto parsed =
      safetensors::parse_header(bytes, bytes.size(), label, {safetensors::SizeCheck::kHeaderOnly});
  if (!parsed) return tl::unexpected(std::move(parsed.error()));
  const uint64_t declared = parsed->data_start() + parsed->data_bytes;
  auto full = prefix->file_bytes ? prefix->file_bytes : header->file_bytes;
  if (full && *full != declared) {
    p.result.notes.push_back(fmt::format("{} is {} bytes on {}, and its header declares {}", shard,
                                         *full, c.settings.endpoint, declared));
  }
  p.sizes_known = p.sizes_known && full.has_value();
  p.result.checkpoint_file_bytes = add_saturating(p.result.checkpoint_file_bytes, full.value_or(0));
  return staging.write(shard, bytes);
}

// The shards to fetch: the index's, or the single file when there is no index.
Result<std::vector<std::string>> shard_list(Client& client, const Context& c, Staging& staging) {
  const std::string url = c.url(safetensors::kIndexFileName);
  auto r = client.get(url, std::nullopt, kMaxIndexBytes);
  if (!r) return tl::unexpected(std::move(r.error()));
  if (r->status == 404) return std::vector<std::string>{std::string(safetensors::kSingleFileName)};
  if (r->status != 200) return status_failure(*r, c, url, "");
  if (r->cut) {
    return fail(fmt::format("GET {}: more than {} of shard index; not read", url,
                            format_binary(kMaxIndexBytes)));
  }
  auto index = safetensors::parse_index(r->body, url);
  if (!index) return tl::unexpected(std::move(index.error()));
  if (index->shards.size() > kMaxShards) {
    return fail(fmt::format("{} names {} shards, more than the {} sparkdoc fetches", url,
                            index->shards.size(), kMaxShards));
  }
  for (const auto& shard : index->shards) {
    if (auto problem = shard_name_problem(shard); !problem.empty()) {
      return fail(fmt::format("{} names the shard \"{}\", which {}; not fetched", url,
                              printable(shard), problem));
    }
  }
  if (auto written = staging.write(safetensors::kIndexFileName, r->body); !written) {
    return tl::unexpected(std::move(written.error()));
  }
  return std::move(index->shards);
}

Result<FetchResult> from_cache(const ModelCache& cache, const ModelId& id, std::string dir) {
  FetchResult result;
  result.dir = std::move(dir);
  result.from_cache = true;
  if (auto marker = cache.marker(id.revision)) {
    result.endpoint = marker->endpoint;
    result.commit = marker->commit;
    result.fetched_at = marker->fetched_at;
    result.shards = static_cast<size_t>(marker->shards);
    result.checkpoint_file_bytes = marker->checkpoint_file_bytes;
  }
  return result;
}

Result<FetchResult> fetch_online(const ModelId& id, const HubSettings& settings,
                                 const FetchOptions& options, const ModelCache& cache) {
  const Result<Curl>& curl = Curl::instance();
  if (!curl) {
    return fail(curl.error().why, fmt::format("cannot fetch {} from {}: {}", id.label(),
                                              settings.endpoint, curl.error().message));
  }
  auto token = read_token();
  if (!token) return tl::unexpected(std::move(token.error()));
  HttpOptions http = options.http;
  http.endpoint = settings.endpoint;
  http.token = token->value;
  http.ca_bundle = settings.ca_bundle;
  auto client = Client::make(*curl, std::move(http));
  if (!client) return tl::unexpected(std::move(client.error()));
  auto staging = cache.stage(id.revision);
  if (!staging) return tl::unexpected(std::move(staging.error()));
  const Context c{id, settings, *token};

  FetchResult result;
  result.endpoint = settings.endpoint;
  auto config = fetch_small(
      *client, c, "config.json", kMaxConfigBytes,
      fmt::format("no such model or revision: {} has no config.json at revision {} (check the "
                  "name and --revision)",
                  id.repo(), id.revision));
  if (!config) return tl::unexpected(std::move(config.error()));
  auto parsed = nlohmann::json::parse(config->body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return fail(fmt::format("GET {}: not a JSON object, so not a model's config.json",
                            c.url("config.json")));
  }
  result.commit = config->repo_commit;
  if (auto written = staging->write("config.json", config->body); !written) {
    return tl::unexpected(std::move(written.error()));
  }
  auto shards = shard_list(*client, c, *staging);
  if (!shards) return tl::unexpected(std::move(shards.error()));
  const bool single = shards->size() == 1 && (*shards)[0] == safetensors::kSingleFileName;
  const std::string missing =
      single ? fmt::format(
                   "{} has no safetensors weights: neither {} nor {} is there (sparkdoc "
                   "plan reads safetensors headers; a .bin or GGUF checkpoint has none)",
                   id.label(), safetensors::kIndexFileName, safetensors::kSingleFileName)
             : fmt::format("the index names a shard that {} does not have", id.label());
  Progress p{result};
  for (size_t i = 0; i < shards->size(); ++i) {
    if (options.progress) options.progress(i + 1, shards->size(), client->traffic().body_bytes);
    if (auto ok = fetch_shard(*client, c, (*shards)[i], missing, *staging, p); !ok) {
      return tl::unexpected(std::move(ok.error()));
    }
  }
  if (!p.sizes_known) result.checkpoint_file_bytes = 0;
  // The folder must read as a checkpoint before it is put in place as a complete fetch.
  auto checkpoint =
      safetensors::open_checkpoint(staging->path(), {safetensors::SizeCheck::kHeaderOnly});
  if (!checkpoint) {
    return fail(fmt::format("what {} sent for {} is not one checkpoint: {}", settings.endpoint,
                            id.label(), checkpoint.error().message));
  }
  if (result.range_ignored) {
    result.notes.push_back(fmt::format(
        "{} ignored the Range requests and sent whole files; each transfer was stopped after "
        "the bytes of its header",
        settings.endpoint));
  }
  result.shards = shards->size();
  result.traffic = client->traffic();
  result.fetched_at = utc_now_iso8601();
  CacheMarker marker{settings.endpoint,         result.commit,
                     result.fetched_at,         result.shards,
                     result.traffic.body_bytes, result.checkpoint_file_bytes};
  auto dir = cache.commit(*staging, id.revision, marker);
  if (!dir) return tl::unexpected(std::move(dir.error()));
  result.dir = std::move(*dir);
  return result;
}

}  // namespace

Result<HubSettings> settings_from_env() {
  HubSettings s;
  if (const char* e = env("HF_ENDPOINT")) {
    std::string_view endpoint = e;
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.remove_suffix(1);
    bool visible = !endpoint.empty() && endpoint.size() <= 2048;
    for (char ch : endpoint) visible = visible && ch > ' ' && ch < 0x7f;
    const size_t scheme = starts_with(endpoint, "https://")  ? 8
                          : starts_with(endpoint, "http://") ? 7
                                                             : 0;
    if (!visible || scheme == 0 || endpoint.size() == scheme) {
      return fail(
          fmt::format("HF_ENDPOINT={} is not an http:// or https:// URL (the Hub, or a "
                      "mirror such as https://hf-mirror.com)",
                      e));
    }
    s.endpoint = std::string(endpoint);
  }
  s.offline = truthy(std::getenv("HF_HUB_OFFLINE"));
  auto root = cache_root_from_env();
  if (!root) return tl::unexpected(std::move(root.error()));
  s.cache_root = std::move(*root);
  if (const char* ca = env("CURL_CA_BUNDLE")) {
    s.ca_bundle = ca;
  } else if (const char* requests_ca = env("REQUESTS_CA_BUNDLE")) {
    s.ca_bundle = requests_ca;
  }
  return s;
}

Result<Token> read_token() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (const char* value = env(name)) {
      auto token = parse_token(value, name);
      if (!token) return tl::unexpected(std::move(token.error()));
      return Token{std::move(*token), name};
    }
  }
  std::string path;
  if (const char* p = env("HF_TOKEN_PATH")) {
    path = p;
  } else if (const char* home = env("HF_HOME")) {
    path = std::string(home) + "/token";
  } else if (const char* user = env("HOME")) {
    path = std::string(user) + "/.cache/huggingface/token";
  } else {
    return Token{};
  }
  auto text = read_text(path, kMaxTokenFileBytes);
  if (!text) {
    if (text.error().why == Why::kAbsent) return Token{};
    return fail(fmt::format("cannot read the token file: {} (fix it, or set HF_TOKEN)",
                            text.error().message));
  }
  auto token = parse_token(*text, path);
  if (!token) {
    if (token.error().why == Why::kAbsent) return Token{};
    return tl::unexpected(std::move(token.error()));
  }
  return Token{std::move(*token), path};
}

Result<FetchResult> fetch_headers(const ModelId& id, const HubSettings& settings,
                                  const FetchOptions& options) {
  const bool offline = options.offline || settings.offline;
  const char* why_offline = options.offline ? "--offline" : "HF_HUB_OFFLINE";
  if (offline && options.refresh) {
    return fail(
        fmt::format("--refresh fetches from the Hub, and {} keeps sparkdoc off the "
                    "network: drop one",
                    why_offline));
  }
  auto cache = ModelCache::open(settings.cache_root, id);
  if (!cache) return tl::unexpected(std::move(cache.error()));
  if (!options.refresh) {
    if (auto dir = cache->complete(id.revision)) return from_cache(*cache, id, std::move(*dir));
  }
  if (offline) {
    return fail(Why::kAbsent,
                fmt::format("{} is in neither the Hugging Face cache nor sparkdoc's ({}/{}), and "
                            "{} keeps sparkdoc off the network: plan it once where the Hub can "
                            "be reached (only its headers are fetched, and they are kept in that "
                            "folder, which can be copied here), or download the model",
                            id.label(), cache->path(), id.revision, why_offline));
  }
  return fetch_online(id, settings, options, *cache);
}

}  // namespace sparkdoc::hub
