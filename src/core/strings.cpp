#include "core/strings.h"

#include <cctype>
#include <charconv>

namespace sparkdoc {
namespace {

// The space at text[i] joins a number to its unit ("24.4 GB"): a line never breaks there.
bool unit_follows(std::string_view text, size_t i) {
  if (i == 0 || text[i - 1] < '0' || text[i - 1] > '9') return false;
  std::string_view rest = text.substr(i + 1);
  for (std::string_view unit : {"GB", "GiB", "MiB", "KiB", "kB", "s)", "s ", "s:", "min"}) {
    if (rest.starts_with(unit)) return true;
  }
  return rest == "s";
}

}  // namespace

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }
bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t pos = s.find('\n', start);
    if (pos == std::string_view::npos) pos = s.size();
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  s = trim(s);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_i64(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string wrap_text(std::string_view text, size_t width, size_t indent, size_t first_column) {
  // Words keep the spaces before them (so columns stay aligned) unless a line breaks there; a
  // `quoted command` is one word, so it is never split across lines.
  std::string out;
  size_t line_start = 0;
  size_t i = 0;
  bool line_has_word = false;
  while (i < text.size()) {
    size_t gap_start = i;
    while (i < text.size() && text[i] == ' ') ++i;
    std::string_view gap = text.substr(gap_start, i - gap_start);
    if (i == text.size()) break;
    size_t word_start = i;
    bool quoted = false;
    while (i < text.size() && (quoted || text[i] != ' ' || unit_follows(text, i))) {
      if (text[i] == '`') quoted = !quoted;
      ++i;
    }
    std::string_view word = text.substr(word_start, i - word_start);
    size_t line_len = out.size() - line_start + (line_start == 0 ? first_column : 0);
    if (line_has_word && line_len + gap.size() + word.size() > width) {
      out += '\n';
      line_start = out.size();
      out.append(indent, ' ');
    } else {
      out.append(gap);
    }
    out.append(word);
    line_has_word = true;
  }
  return out;
}

}  // namespace sparkdoc
