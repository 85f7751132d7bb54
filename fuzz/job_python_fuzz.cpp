// The Python reader of `sparkdoc lint`: tokens, then imports, calls and assignments, over any
// bytes. Every call's arguments and every assignment are walked, so a dangling view or a
// malformed value would show. Seeds in corpus/fuzz_job_python/: the recipes' loading, LoRA and
// trainer code and a file of every string form.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "job/python_source.h"
#include "job/python_tokens.h"

namespace {

size_t walk(const sparkdoc::job::PyValue& v, int depth) {
  if (depth > 200) __builtin_trap();
  size_t n = v.text.size();
  for (const auto& item : v.items) n += walk(item, depth + 1);
  if (v.call) {
    for (const auto& a : v.call->args) n += walk(a.value, depth + 1) + a.keyword.size();
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tokens = sparkdoc::job::tokenize_python(text);
  uint32_t line = 1;
  for (const auto& t : tokens) {
    // Tokens come in order and their views lie inside the input.
    if (t.line < line) __builtin_trap();
    line = t.line;
    if (t.text.data() < text.data() || t.text.data() + t.text.size() > text.data() + text.size()) {
      __builtin_trap();
    }
  }
  auto source = sparkdoc::job::parse_python_source(text);
  size_t n = 0;
  for (const auto& c : source.calls) {
    n += c.callee.size() + c.method().size();
    for (const auto& a : c.args) n += walk(a.value, 0);
  }
  for (const auto& a : source.assignments) n += walk(a.value, 0) + a.target.size();
  for (const auto& i : source.imports) {
    n += source.imports_from(i.qualified) ? 1 : 0;
    (void)source.value_of(i.name, i.line + 1);
  }
  (void)n;
  return 0;
}
