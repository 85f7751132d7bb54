#include "sys/swaps.h"

#include <fmt/format.h>

#include <limits>

#include "core/strings.h"

namespace sparkdoc::sys {
namespace {

bool is_octal(char c) {
  return c >= '0' && c <= '7';
}

// seq_file's mangle_path escapes " \t\n\\" as a backslash and three octal digits.
std::string unescape_octal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && is_octal(s[i + 1]) && is_octal(s[i + 2]) &&
        is_octal(s[i + 3])) {
      int value = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      if (value <= 0xff) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

Result<uint64_t> kb_to_bytes(std::string_view word, std::string_view what, size_t line) {
  auto kb = parse_u64(word);
  if (!kb) return fail(fmt::format("swaps: line {}: {} is not a number", line, what));
  if (*kb > std::numeric_limits<uint64_t>::max() / 1024) {
    return fail(fmt::format("swaps: line {}: {} overflows", line, what));
  }
  return *kb * 1024;
}

}  // namespace

Result<std::vector<SwapArea>> parse_swaps(std::string_view text) {
  auto all = lines(text);
  if (all.empty() || !starts_with(trim(all.front()), "Filename")) {
    return fail("swaps: no header line");
  }
  std::vector<SwapArea> areas;
  for (size_t i = 1; i < all.size(); ++i) {
    std::string_view line = trim(all[i]);
    if (line.empty()) continue;
    auto words = split_ws(line);
    if (words.size() != 5) {
      return fail(fmt::format("swaps: line {}: {} fields, 5 expected", i + 1, words.size()));
    }
    SwapArea area;
    area.path = unescape_octal(words[0]);
    area.type = std::string(words[1]);
    auto size = kb_to_bytes(words[2], "size", i + 1);
    if (!size) return tl::unexpected(size.error());
    auto used = kb_to_bytes(words[3], "used", i + 1);
    if (!used) return tl::unexpected(used.error());
    auto priority = parse_i64(words[4]);
    if (!priority || *priority < std::numeric_limits<int>::min() ||
        *priority > std::numeric_limits<int>::max()) {
      return fail(fmt::format("swaps: line {}: priority is not a number", i + 1));
    }
    area.size_bytes = *size;
    area.used_bytes = *used;
    area.priority = static_cast<int>(*priority);
    areas.push_back(std::move(area));
  }
  return areas;
}

Result<std::vector<SwapArea>> read_swaps(const Root& root) {
  auto text = read_text(root.path("/proc/swaps"));
  if (!text) return tl::unexpected(text.error());
  return parse_swaps(*text);
}

}  // namespace sparkdoc::sys
