#include "safetensors/json_cursor.h"

#include <fmt/format.h>

namespace sparkdoc::safetensors::detail {

bool valid_utf8(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char* end = p + bytes.size();
  while (p < end) {
    // ASCII runs are the common case: eight bytes at a time.
    while (end - p >= 8) {
      uint64_t chunk;
      __builtin_memcpy(&chunk, p, 8);
      if (chunk & 0x8080808080808080ull) break;
      p += 8;
    }
    if (p >= end) break;
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int extra;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;  // continuation byte first, overlong lead (C0/C1) or past F4
    }
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;  // overlong or out of range
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogates are not characters
    p += extra + 1;
  }
  return true;
}

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

void JsonCursor::skip_ws() {
  while (pos_ < text_.size() && is_ws(text_[pos_])) ++pos_;
}

bool JsonCursor::fail(std::string message) {
  if (error_.empty()) error_ = fmt::format("{} at byte {} of the JSON", message, pos_);
  return false;
}

bool JsonCursor::expect(char c, std::string_view what) {
  skip_ws();
  if (pos_ >= text_.size()) return fail(fmt::format("unexpected end, expected {}", what));
  if (text_[pos_] != c) return fail(fmt::format("expected {}", what));
  ++pos_;
  return true;
}

std::string_view JsonCursor::peek_kind() {
  skip_ws();
  if (pos_ >= text_.size()) return "nothing";
  switch (text_[pos_]) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
  }
}

bool JsonCursor::open(char c, std::string_view what) {
  if (depth_ >= kMaxDepth) return fail("nesting deeper than 64");
  if (!expect(c, what)) return false;
  ++depth_;
  first_bits_ |= (uint64_t{1} << (depth_ - 1));
  done_ = false;
  return true;
}

bool JsonCursor::begin_object() { return open('{', "'{'"); }
bool JsonCursor::begin_array() { return open('[', "'['"); }

bool JsonCursor::advance(char close, std::string_view container) {
  done_ = false;
  skip_ws();
  if (pos_ >= text_.size()) return fail(fmt::format("unexpected end inside {}", container));
  uint64_t bit = uint64_t{1} << (depth_ - 1);
  if (text_[pos_] == close) {
    ++pos_;
    --depth_;
    done_ = true;
    return false;
  }
  if ((first_bits_ & bit) == 0) {
    if (text_[pos_] != ',') return fail(fmt::format("expected ',' or '{}'", close));
    ++pos_;
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == close) {
      return fail(fmt::format("trailing comma in {}", container));
    }
  }
  first_bits_ &= ~bit;
  return true;
}

bool JsonCursor::next_member(std::string& key) {
  if (!advance('}', "an object")) return false;
  if (!read_string(key)) return false;
  return expect(':', "':'");
}

bool JsonCursor::next_element() { return advance(']', "an array"); }

bool JsonCursor::read_hex4(uint32_t& out) {
  if (text_.size() - pos_ < 4) return fail("truncated \\u escape");
  out = 0;
  for (int i = 0; i < 4; ++i) {
    char c = text_[pos_++];
    out <<= 4;
    if (c >= '0' && c <= '9') out |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') out |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') out |= static_cast<uint32_t>(c - 'A' + 10);
    else return fail("bad hex digit in a \\u escape");
  }
  return true;
}

bool JsonCursor::read_string(std::string& out) {
  out.clear();
  if (!expect('"', "a string")) return false;
  size_t run = pos_;
  while (true) {
    if (pos_ >= text_.size()) return fail("unterminated string");
    char c = text_[pos_];
    if (c == '"') {
      out.append(text_.substr(run, pos_ - run));
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
    if (c != '\\') {
      ++pos_;
      continue;
    }
    out.append(text_.substr(run, pos_ - run));
    ++pos_;
    if (pos_ >= text_.size()) return fail("unterminated escape");
    char e = text_[pos_++];
    switch (e) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!read_hex4(cp)) return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
            return fail("lone high surrogate in a \\u escape");
          }
          pos_ += 2;
          uint32_t low;
          if (!read_hex4(low)) return false;
          if (low < 0xDC00 || low > 0xDFFF) return fail("bad surrogate pair in a \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default: return fail("unknown escape in a string");
    }
    run = pos_;
  }
}

bool JsonCursor::read_u64(uint64_t& out) {
  skip_ws();
  if (pos_ >= text_.size()) return fail("unexpected end, expected an integer");
  char c = text_[pos_];
  if (c == '-') return fail("negative number where a size or offset is due");
  if (c < '0' || c > '9') return fail(fmt::format("expected an integer, found {}", peek_kind()));
  size_t start = pos_;
  out = 0;
  if (c == '0') {
    ++pos_;
  } else {
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (out > (UINT64_MAX - digit) / 10) {
        pos_ = start;
        return fail("integer does not fit 64 bits");
      }
      out = out * 10 + digit;
      ++pos_;
    }
  }
  if (pos_ < text_.size() &&
      (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
       (text_[pos_] >= '0' && text_[pos_] <= '9'))) {
    return fail("expected a whole number (no fraction, exponent or leading zero)");
  }
  return true;
}

bool JsonCursor::at_null() {
  skip_ws();
  if (text_.substr(pos_, 4) == "null") {
    pos_ += 4;
    return true;
  }
  return false;
}

bool JsonCursor::skip_number() {
  size_t start = pos_;
  if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
  auto digits = [&] {
    size_t d = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ - d;
  };
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
  } else if (digits() == 0) {
    pos_ = start;
    return fail("malformed value");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) return fail("malformed number");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (digits() == 0) return fail("malformed number");
  }
  return true;
}

bool JsonCursor::skip_literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return fail("malformed value");
  pos_ += word.size();
  return true;
}

bool JsonCursor::skip_value() { return skip_value_at(depth_); }

bool JsonCursor::skip_value_at(int depth) {
  if (depth >= kMaxDepth) return fail("nesting deeper than 64");
  skip_ws();
  if (pos_ >= text_.size()) return fail("unexpected end, expected a value");
  char c = text_[pos_];
  if (c == '"') {
    std::string ignored;
    return read_string(ignored);
  }
  if (c == '{') {
    if (!begin_object()) return false;
    std::string key;
    while (next_member(key)) {
      if (!skip_value_at(depth + 1)) return false;
    }
    return done_;
  }
  if (c == '[') {
    if (!begin_array()) return false;
    while (next_element()) {
      if (!skip_value_at(depth + 1)) return false;
    }
    return done_;
  }
  if (c == 't') return skip_literal("true");
  if (c == 'f') return skip_literal("false");
  if (c == 'n') return skip_literal("null");
  return skip_number();
}

bool JsonCursor::at_end() {
  skip_ws();
  if (pos_ != text_.size()) return fail("unexpected bytes after the JSON value");
  return true;
}

}  // namespace sparkdoc::safetensors::detail
