#include "hub/http.h"

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "core/strings.h"
#include "core/version.h"

namespace sparkdoc::hub {
namespace {

constexpr size_t kMaxErrorMessage = 200;

// One request's state, handed to libcurl's callbacks.
struct Transfer {
  Response response;
  uint64_t max_body = 0;
  uint64_t received = 0;  // body bytes libcurl handed over, kept or not
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  t->received += bytes;
  const uint64_t room = t->max_body - t->response.body.size();
  if (bytes > room) {
    // Returning less than was handed over stops the transfer: a server that ignored the Range
    // sends no more than this.
    t->response.body.append(data, static_cast<size_t>(room));
    t->response.cut = true;
    return static_cast<size_t>(room);
  }
  t->response.body.append(data, bytes);
  return bytes;
}

bool is_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !s.empty();
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* r = &static_cast<Transfer*>(user)->response;
  const size_t bytes = size * count;
  std::string_view line(data, bytes);
  if (is_status_line(line)) {
    // A redirect's fields do not describe the response that follows it.
    r->content_range.reset();
    r->retry_after.clear();
    r->error_code.clear();
    r->error_message.clear();
    return bytes;
  }
  auto field = parse_header_line(line);
  if (!field) return bytes;
  const std::string name = to_lower(field->name);
  if (name == "content-range") {
    r->content_range = parse_content_range(field->value);
  } else if (name == "retry-after") {
    r->retry_after = retry_after_text(field->value);
  } else if (name == "x-error-code") {
    r->error_code = std::string(field->value.substr(0, 64));
  } else if (name == "x-error-message") {
    r->error_message = std::string(field->value.substr(0, kMaxErrorMessage));
  } else if (name == "x-repo-commit" && r->repo_commit.empty() && field->value.size() <= 64 &&
             is_hex(field->value)) {
    r->repo_commit = std::string(field->value);
  }
  return bytes;
}

// What to do about a transport failure, by libcurl's code.
std::string advice(CURLcode code, const HttpOptions& o) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
      return fmt::format(
          "is this machine online? Set HF_ENDPOINT to a mirror it can reach, or fetch the "
          "headers once on a machine that is online (sparkdoc plan ORG/NAME there) and copy "
          "sparkdoc's cache folder (~/.cache/sparkdoc/hub) here; {} is the endpoint tried",
          o.endpoint);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
      return "a TLS error: check the system's CA certificates (apt install ca-certificates), "
             "the clock (certificates are checked against it), and, behind a proxy that "
             "inspects TLS, name its CA file in CURL_CA_BUNDLE";
    case CURLE_TOO_MANY_REDIRECTS:
      return fmt::format("the server redirected more than {} times (a redirect loop)",
                         o.max_redirects);
    case CURLE_UNSUPPORTED_PROTOCOL:
      return "sparkdoc follows redirects to http and https only";
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return "the server ended the answer early; try again, or set HF_ENDPOINT to another "
             "mirror";
    default:
      return "try again, or set HF_ENDPOINT to another mirror";
  }
}

}  // namespace

Client::Client(const Curl& curl, HttpOptions options, CURL* handle, curl_slist* headers)
    : curl_(&curl), options_(std::move(options)), handle_(handle), headers_(headers) {}

Client::Client(Client&& other) noexcept
    : curl_(other.curl_),
      options_(std::move(other.options_)),
      handle_(std::exchange(other.handle_, nullptr)),
      headers_(std::exchange(other.headers_, nullptr)),
      traffic_(other.traffic_) {}

Client::~Client() {
  if (handle_ != nullptr) curl_->api().easy_cleanup(handle_);
  if (headers_ != nullptr) curl_->api().slist_free_all(headers_);
}

Result<Client> Client::make(const Curl& curl, HttpOptions options) {
  const CurlEntryPoints& api = curl.api();
  CURL* handle = api.easy_init();
  if (handle == nullptr) return fail(curl.library() + ": curl_easy_init failed");
  curl_slist* headers = nullptr;
  if (!options.token.empty()) {
    const std::string auth = "Authorization: Bearer " + options.token;
    headers = api.slist_append(nullptr, auth.c_str());
  }
  Client client(curl, std::move(options), handle, headers);
  const HttpOptions& o = client.options_;
  const std::string agent = std::string("sparkdoc/") + kVersion;
  // Every option is one libcurl 7.17 knows, except where a fallback follows.
  api.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(handle, CURLOPT_USERAGENT, agent.c_str());
  api.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
  api.easy_setopt(handle, CURLOPT_MAXREDIRS, o.max_redirects);
  api.easy_setopt(handle, CURLOPT_UNRESTRICTED_AUTH, 0L);
  api.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, o.connect_timeout_ms);
  api.easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, o.low_speed_bytes);
  api.easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, o.low_speed_time_s);
  api.easy_setopt(handle, CURLOPT_WRITEFUNCTION, &on_body);
  api.easy_setopt(handle, CURLOPT_HEADERFUNCTION, &on_header);
  if (headers != nullptr) api.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  if (!o.ca_bundle.empty()) api.easy_setopt(handle, CURLOPT_CAINFO, o.ca_bundle.c_str());
  // http and https only, redirects included: a redirect to file:// or another scheme is refused.
  bool protocols_set = false;
#if LIBCURL_VERSION_NUM >= 0x075500
  protocols_set = api.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK &&
                  api.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") == CURLE_OK;
#endif
  if (!protocols_set) {
    const long http = CURLPROTO_HTTP | CURLPROTO_HTTPS;
    if (api.easy_setopt(handle, CURLOPT_PROTOCOLS, http) != CURLE_OK ||
        api.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS, http) != CURLE_OK) {
      return fail(curl.library() + " cannot be limited to http and https; not used");
    }
  }
  return client;
}

Result<Response> Client::get(const std::string& url, std::optional<ByteRange> range,
                             uint64_t max_body) {
  const CurlEntryPoints& api = curl_->api();
  Transfer t;
  t.max_body = max_body;
  char error_text[CURL_ERROR_SIZE] = {};
  const std::string range_text = range ? fmt::format("{}-{}", range->first, range->last) : "";
  api.easy_setopt(handle_, CURLOPT_URL, url.c_str());
  api.easy_setopt(handle_, CURLOPT_RANGE, range ? range_text.c_str() : nullptr);
  api.easy_setopt(handle_, CURLOPT_WRITEDATA, static_cast<void*>(&t));
  api.easy_setopt(handle_, CURLOPT_HEADERDATA, static_cast<void*>(&t));
  api.easy_setopt(handle_, CURLOPT_ERRORBUFFER, error_text);
  const CURLcode code = api.easy_perform(handle_);
  // The buffer lives on this stack frame only.
  api.easy_setopt(handle_, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));

  long status = 0, redirects = 0, header_bytes = 0;
  api.easy_getinfo(handle_, CURLINFO_RESPONSE_CODE, &status);
  api.easy_getinfo(handle_, CURLINFO_REDIRECT_COUNT, &redirects);
  api.easy_getinfo(handle_, CURLINFO_HEADER_SIZE, &header_bytes);
  const char* effective = nullptr;
  api.easy_getinfo(handle_, CURLINFO_EFFECTIVE_URL, &effective);
  traffic_.requests += 1 + static_cast<uint64_t>(redirects > 0 ? redirects : 0);
  traffic_.body_bytes += t.received;
  traffic_.header_bytes += static_cast<uint64_t>(header_bytes > 0 ? header_bytes : 0);

  // A transfer stopped by on_body is what was asked for; any other failure is the network's.
  if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && t.response.cut)) {
    std::string detail = error_text[0] != '\0' ? error_text : api.easy_strerror(code);
    return fail(fmt::format("GET {} failed: {}; {}", url, trim(detail), advice(code, options_)));
  }
  t.response.status = status;
  t.response.redirects = redirects;
  t.response.url = effective != nullptr ? effective : url;
  return std::move(t.response);
}

}  // namespace sparkdoc::hub
