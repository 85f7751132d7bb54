#include "job/python_tokens.h"

#include <array>
#include <cctype>

namespace sparkdoc::job {
namespace {

bool name_start(unsigned char c) {
  return std::isalpha(c) || c == '_' || c >= 0x80;
}
bool name_char(unsigned char c) {
  return std::isalnum(c) || c == '_' || c >= 0x80;
}

// The prefixes a string literal may carry, in any case: r, u, b, f, br, rb, fr, rf.
struct Prefix {
  bool valid = false;
  bool raw = false;
  bool fstring = false;
};

Prefix string_prefix(std::string_view letters) {
  Prefix p;
  if (letters.empty() || letters.size() > 2) return p;
  int r = 0, b = 0, f = 0, u = 0;
  for (char c : letters) {
    switch (std::tolower(static_cast<unsigned char>(c))) {
      case 'r':
        ++r;
        break;
      case 'b':
        ++b;
        break;
      case 'f':
        ++f;
        break;
      case 'u':
        ++u;
        break;
      default:
        return p;
    }
  }
  // Each letter at most once; "u" stands alone; bytes cannot be formatted.
  if (r > 1 || b > 1 || f > 1 || u > 1 || (u && letters.size() > 1) || (b && f)) return p;
  p.valid = true;
  p.raw = r > 0;
  p.fstring = f > 0;
  return p;
}

constexpr std::array<std::string_view, 24> kMultiCharOps{
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=",
    ">=",  "==",  "!=",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "@="};
constexpr std::string_view kSingleOps = "()[]{},:.;=+-*/%&|^~<>@!";

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    while (i_ < s_.size()) step();
    end_line();
    return std::move(out_);
  }

 private:
  char at(size_t k) const { return k < s_.size() ? s_[k] : '\0'; }

  bool newline_at(size_t k, size_t& width) const {
    if (at(k) == '\r' && at(k + 1) == '\n') return width = 2, true;
    if (at(k) == '\n' || at(k) == '\r') return width = 1, true;
    return false;
  }

  void push(TokenKind kind, size_t begin, size_t end, uint32_t line) {
    Token t;
    t.kind = kind;
    t.text = s_.substr(begin, end - begin);
    t.line = line;
    push(std::move(t));
  }
  void push(Token t) {
    if (t.kind != TokenKind::kComment && t.kind != TokenKind::kNewline) line_has_code_ = true;
    out_.push_back(std::move(t));
  }

  // A logical line ends at a newline outside brackets once the line held code.
  void end_line() {
    if (!line_has_code_) return;
    push(TokenKind::kNewline, i_, i_, line_);
    line_has_code_ = false;
  }

  void step() {
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    size_t width = 0;
    if (c == ' ' || c == '\t' || c == '\f') {
      ++i_;
    } else if (c == '\\' && newline_at(i_ + 1, width)) {
      i_ += 1 + width;  // explicit line joining
      ++line_;
    } else if (newline_at(i_, width)) {
      if (depth_ == 0) end_line();
      i_ += width;
      ++line_;
    } else if (c == '#') {
      size_t begin = i_;
      while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      push(TokenKind::kComment, begin, i_, line_);
    } else if (c == '"' || c == '\'') {
      string_literal(i_, Prefix{true, false, false});
    } else if (name_start(c)) {
      size_t begin = i_;
      while (i_ < s_.size() && name_char(static_cast<unsigned char>(s_[i_]))) ++i_;
      Prefix p = string_prefix(s_.substr(begin, i_ - begin));
      if (p.valid && (at(i_) == '"' || at(i_) == '\'')) {
        string_literal(begin, p);
      } else {
        push(TokenKind::kName, begin, i_, line_);
      }
    } else if (std::isdigit(c) ||
               (c == '.' && std::isdigit(static_cast<unsigned char>(at(i_ + 1))))) {
      number();
    } else {
      op();
    }
  }

  void number() {
    size_t begin = i_;
    const bool hex_like =
        s_[i_] == '0' && (at(i_ + 1) == 'x' || at(i_ + 1) == 'X' || at(i_ + 1) == 'o' ||
                          at(i_ + 1) == 'O' || at(i_ + 1) == 'b' || at(i_ + 1) == 'B');
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (std::isalnum(c) || c == '_' || c == '.') {
        ++i_;
      } else if ((c == '+' || c == '-') && !hex_like && i_ > begin &&
                 (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E')) {
        ++i_;
      } else {
        break;
      }
    }
    push(TokenKind::kNumber, begin, i_, line_);
  }

  void op() {
    for (std::string_view m : kMultiCharOps) {
      if (s_.substr(i_, m.size()) == m) {
        push(TokenKind::kOp, i_, i_ + m.size(), line_);
        i_ += m.size();
        return;
      }
    }
    const char c = s_[i_];
    if (kSingleOps.find(c) == std::string_view::npos) {
      push(TokenKind::kError, i_, i_ + 1, line_);
      ++i_;
      return;
    }
    if (c == '(' || c == '[' || c == '{') ++depth_;
    if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
    push(TokenKind::kOp, i_, i_ + 1, line_);
    ++i_;
  }

  // Scans one string whose prefix starts at `begin` and whose opening quote is at i_. Leaves
  // i_ after the closing quote (or at the end), counts the lines it spans, and returns whether
  // it was closed. `value` receives the decoded contents when not null.
  bool scan_string(Prefix p, std::string* value) {
    const char quote = s_[i_];
    const bool triple = at(i_ + 1) == quote && at(i_ + 2) == quote;
    i_ += triple ? 3 : 1;
    int field_depth = 0;  // inside an f-string's replacement field
    while (i_ < s_.size()) {
      const char c = s_[i_];
      size_t width = 0;
      if (field_depth == 0) {
        if (c == quote && (!triple || (at(i_ + 1) == quote && at(i_ + 2) == quote))) {
          i_ += triple ? 3 : 1;
          return true;
        }
        if (!triple && newline_at(i_, width)) return false;  // a single-quoted string ends here
        if (c == '\\' && i_ + 1 < s_.size()) {
          escape(p, value);
          continue;
        }
        if (p.fstring && c == '{') {
          if (at(i_ + 1) == '{') {
            if (value) *value += "{{";
            i_ += 2;
            continue;
          }
          field_depth = 1;
        }
      } else {
        if (c == '{' || c == '[' || c == '(') ++field_depth;
        if (c == '}' || c == ']' || c == ')') --field_depth;
        if (c == '"' || c == '\'') {
          // A string inside a replacement field, of any quote (Python 3.12 allows the same).
          size_t begin = i_;
          Prefix inner;
          inner.valid = true;
          inner.fstring = begin > 0 && (s_[begin - 1] == 'f' || s_[begin - 1] == 'F');
          scan_string(inner, nullptr);
          if (value) value->append(s_.substr(begin, i_ - begin));
          continue;
        }
      }
      if (newline_at(i_, width)) {
        if (value) value->append(s_.substr(i_, width));
        i_ += width;
        ++line_;
        continue;
      }
      if (value) *value += c;
      ++i_;
    }
    return false;
  }

  void escape(Prefix p, std::string* value) {
    const char next = s_[i_ + 1];
    size_t width = 0;
    if (newline_at(i_ + 1, width)) {  // a backslash-newline inside a string joins the lines
      i_ += 1 + width;
      ++line_;
      return;
    }
    if (p.raw || p.fstring) {
      if (value) value->append(s_.substr(i_, 2));
      i_ += 2;
      return;
    }
    auto put = [&](char c) {
      if (value) *value += c;
    };
    switch (next) {
      case 'n':
        put('\n');
        break;
      case 't':
        put('\t');
        break;
      case 'r':
        put('\r');
        break;
      case '0':
        put('\0');
        break;
      case '\\':
        put('\\');
        break;
      case '\'':
        put('\'');
        break;
      case '"':
        put('"');
        break;
      case 'x': {
        auto hex = [](char h) -> int {
          if (h >= '0' && h <= '9') return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          return -1;
        };
        int hi = hex(at(i_ + 2));
        int lo = hex(at(i_ + 3));
        if (hi >= 0 && lo >= 0) {
          put(static_cast<char>(hi * 16 + lo));
          i_ += 4;
          return;
        }
        if (value) value->append(s_.substr(i_, 2));
        break;
      }
      default:
        if (value) value->append(s_.substr(i_, 2));
        break;
    }
    i_ += 2;
  }

  void string_literal(size_t begin, Prefix p) {
    const uint32_t line = line_;
    std::string value;
    const bool closed = scan_string(p, &value);
    Token t;
    t.kind = TokenKind::kString;
    t.text = s_.substr(begin, i_ - begin);
    t.line = line;
    t.value = std::move(value);
    t.fstring = p.fstring;
    t.unterminated = !closed;
    push(std::move(t));
  }

  std::string_view s_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  int depth_ = 0;
  bool line_has_code_ = false;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize_python(std::string_view source) {
  return Tokenizer(source).run();
}

}  // namespace sparkdoc::job
