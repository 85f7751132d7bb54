// What a client sends to `sparkdoc watch --listen`: the request head (parse_request_line and
// the response built from it) and, from the same bytes, a --listen address.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "watch/http.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::watch;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string reply = http_response(parse_request_line(text), "x 1\n");
  if (reply.compare(0, 9, "HTTP/1.1 ") != 0) __builtin_trap();
  (void)parse_listen_address(text);
  return 0;
}
