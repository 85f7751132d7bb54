// HTTP GETs through libcurl for the Hub fetcher: one easy handle (so one connection, one TLS
// session, reused from request to request), bounded bodies, the response headers the fetcher
// reads, and a count of what crossed the wire.
//
// Redirects are followed by libcurl (at most `max_redirects`, http and https only): the Hub
// answers a large file's URL with a 302 to its CDN. The Range goes with every hop; the token's
// Authorization header goes to the first host only, since libcurl (7.58 and later) drops a
// custom Authorization header when a redirect leaves the host, and (7.83 and later) the port or
// scheme, unless CURLOPT_UNRESTRICTED_AUTH is set, which it is not.
// Threading: a Client is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "hub/curl_api.h"
#include "hub/wire.h"

namespace sparkdoc::hub {

struct HttpOptions {
  std::string endpoint;   // named in errors ("cannot reach https://huggingface.co")
  std::string token;      // sent as "Authorization: Bearer TOKEN"; "" for none
  std::string ca_bundle;  // a CA file instead of libcurl's own; "" for libcurl's
  long connect_timeout_ms = 10'000;
  // A transfer slower than low_speed_bytes per second for low_speed_time_s is abandoned: the
  // Hub at 30 KB/s stays far above it, a server that stalls does not hang sparkdoc.
  long low_speed_bytes = 100;
  long low_speed_time_s = 30;
  long max_redirects = 10;
};

struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive, as in "bytes=first-last"
  uint64_t size() const { return last - first + 1; }
};

struct Response {
  long status = 0;   // of the last response (after redirects)
  std::string body;  // at most the max_body asked for
  bool cut = false;  // the server had more than max_body; the transfer was stopped
  std::optional<ContentRange> content_range;
  std::string retry_after;    // retry_after_text of Retry-After; "" when not given
  std::string error_code;     // X-Error-Code, the Hub's reason (GatedRepo, RepoNotFound, ...)
  std::string error_message;  // X-Error-Message, at most 200 bytes
  std::string repo_commit;    // X-Repo-Commit of the first response carrying one
  std::string url;            // where the body came from (after redirects)
  long redirects = 0;
};

// What crossed the wire, summed over every request of a Client: requests (each redirect hop
// one), body bytes received and response header bytes.
struct Traffic {
  uint64_t requests = 0;
  uint64_t body_bytes = 0;
  uint64_t header_bytes = 0;
  bool operator==(const Traffic&) const = default;
};

class Client {
 public:
  static Result<Client> make(const Curl& curl, HttpOptions options);
  Client(Client&& other) noexcept;
  Client& operator=(Client&&) = delete;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // GET `url`, with `range` when given. At most `max_body` bytes of the body are kept: once that
  // many have come the transfer is stopped (a server that ignores Range sends the whole file,
  // and `cut` says it was stopped). Any HTTP status is a Response; an error is a transport
  // failure (name resolution, connection, TLS, a timeout, a redirect loop, a redirect to another
  // scheme, a body shorter than the server announced), its message naming the endpoint and
  // saying what to do.
  Result<Response> get(const std::string& url, std::optional<ByteRange> range, uint64_t max_body);

  const Traffic& traffic() const { return traffic_; }

 private:
  Client(const Curl& curl, HttpOptions options, CURL* handle, curl_slist* headers);

  const Curl* curl_;
  HttpOptions options_;
  CURL* handle_ = nullptr;
  curl_slist* headers_ = nullptr;
  Traffic traffic_;
};

}  // namespace sparkdoc::hub
