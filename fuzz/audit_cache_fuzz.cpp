// The audit's cache file (audit/fact_cache.h): untrusted bytes in the user's cache folder that
// decide which files the audit reads. Whatever parses must render and parse back to itself, so
// that a cache written from what was read is the cache read back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/fact_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkdoc::audit;
  // The seeds' key (fuzz/corpus/fuzz_audit_cache): a file of another key stops at its header.
  const FactCacheKey key{"/s", "x86_64", "1"};
  auto files = parse_fact_cache(std::string_view(reinterpret_cast<const char*>(data), size), key);
  if (!files) return 0;
  auto again = parse_fact_cache(render_fact_cache(key, *files), key);
  if (!again || *again != *files) __builtin_trap();
  return 0;
}
