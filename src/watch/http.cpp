#include "watch/http.h"

#include <fmt/format.h>

#include <charconv>

#include "core/strings.h"

namespace sparkdoc::watch {
namespace {

std::string response(std::string_view status, std::string_view type, const std::string& body,
                     bool head_only) {
  std::string out = fmt::format(
      "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", status,
      type, body.size());
  if (!head_only) out += body;
  return out;
}

}  // namespace

Result<ListenAddress> parse_listen_address(std::string_view text) {
  std::string_view s = trim(text);
  ListenAddress out;
  std::string_view port;
  if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close == std::string_view::npos) return fail(fmt::format("'{}': unclosed '['", text));
    out.host = std::string(s.substr(1, close - 1));
    if (close + 1 >= s.size() || s[close + 1] != ':') {
      return fail(fmt::format("'{}': no port after the address (ADDR:PORT)", text));
    }
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) {
      return fail(fmt::format("'{}': no port (ADDR:PORT, e.g. 127.0.0.1:9400)", text));
    }
    out.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return fail(fmt::format("'{}': the port must be a number from 0 to 65535", text));
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

Result<HttpRequest> parse_request_line(std::string_view head) {
  size_t end = head.find('\n');
  if (end == std::string_view::npos) return fail("incomplete request line");
  std::string_view line = head.substr(0, end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto words = split(line, ' ');
  if (words.size() != 3 || words[0].empty() || words[1].empty()) {
    return fail("the request line is not METHOD PATH VERSION");
  }
  if (!starts_with(words[2], "HTTP/1.")) return fail("not an HTTP/1.x request");
  std::string_view path = words[1];
  if (path.front() != '/') return fail("the path does not start with '/'");
  path = path.substr(0, path.find('?'));
  return HttpRequest{std::string(words[0]), std::string(path)};
}

std::string http_response(const Result<HttpRequest>& request, const std::string& metrics) {
  constexpr std::string_view kText = "text/plain; charset=utf-8";
  if (!request) return response("400 Bad Request", kText, request.error().message + "\n", false);
  bool head = request->method == "HEAD";
  if (request->method != "GET" && !head) {
    return response("405 Method Not Allowed", kText, "only GET and HEAD\n", false);
  }
  if (request->path == "/metrics") {
    return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics, head);
  }
  if (request->path == "/") {
    return response("200 OK", kText, "sparkdoc watch: Prometheus metrics at /metrics\n", head);
  }
  return response("404 Not Found", kText, "not found; metrics are at /metrics\n", head);
}

}  // namespace sparkdoc::watch
