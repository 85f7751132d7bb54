// The HTTP the Prometheus endpoint speaks, as pure functions of text: the --listen address, the
// request line a client sends, and the whole response. The server (metrics_server.h) only moves
// these bytes; parsing what a client sends lives here, where it is fuzzed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sparkdoc::watch {

struct ListenAddress {
  std::string host;   // empty: every interface
  uint16_t port = 0;  // 0: any free port
  bool operator==(const ListenAddress&) const = default;
};

// "127.0.0.1:9400", "localhost:9400", "[::1]:9400", ":9400" (every interface, as dcgm-exporter's
// default). Errors: no port, a port that is not a number below 65536, an unclosed bracket.
Result<ListenAddress> parse_listen_address(std::string_view text);

struct HttpRequest {
  std::string method;
  std::string path;  // without the query string
  bool operator==(const HttpRequest&) const = default;
};

// The request line of a request head ("GET /metrics?x=1 HTTP/1.1\r\nHost: ..."). Errors: no
// complete line, not three words, a version that is not HTTP/1.x, a path not starting with '/'.
Result<HttpRequest> parse_request_line(std::string_view head);

// The whole response to `request`: 200 with `metrics` for GET (or HEAD) /metrics, a pointer to
// /metrics for /, 404 for other paths, 405 for other methods, 400 for a bad request.
std::string http_response(const Result<HttpRequest>& request, const std::string& metrics);

}  // namespace sparkdoc::watch
