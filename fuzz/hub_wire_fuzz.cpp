// What a Hub server (or a mirror posing as one) and the user's files hand the Hub fetcher:
// response header lines, Content-Range and Retry-After values, the token, a model id, and the
// marker of sparkdoc's cache, all from the same bytes. Each result is checked against the
// promise its header makes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hub/cache.h"
#include "hub/model_id.h"
#include "hub/wire.h"

namespace {

bool visible(std::string_view s) {
  for (char c : s) {
    if (c <= ' ' || c >= 0x7f) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::hub;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto line = parse_header_line(text)) {
    if (line->name.empty() || !visible(line->name)) __builtin_trap();
  }
  if (auto range = parse_content_range(text)) {
    if (range->first > range->last) __builtin_trap();
    if (range->complete && range->last >= *range->complete) __builtin_trap();
  }
  if (retry_after_text(text).size() > 64 + 2) __builtin_trap();
  if (auto token = parse_token(text, "fuzz")) {
    if (token->empty() || token->size() > 4096 || !visible(*token)) __builtin_trap();
  }
  // A model id and, after the first NUL, a --revision: whatever passes is safe as folder names.
  const size_t nul = text.find('\0');
  auto id = parse_model_id(text.substr(0, nul),
                           nul == std::string_view::npos ? "" : text.substr(nul + 1));
  if (id) {
    for (const std::string* part : {&id->org, &id->name, &id->revision}) {
      if (part->empty() || part->find("..") != std::string::npos || !visible(*part) ||
          part->find('/') != std::string::npos || part->front() == '.') {
        __builtin_trap();
      }
    }
  }
  (void)parse_cache_marker(text);
  return 0;
}
