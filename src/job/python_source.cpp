#include "job/python_source.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <map>
#include <string>

#include "job/python_tokens.h"

namespace sparkdoc::job {
namespace {

constexpr int kMaxDepth = 64;
// Expressions read per token, at most. Code people write is read about once per token (a few
// times where an assignment's targets are read again); brackets shaped so that nested
// comprehensions read one another again and again (a fuzzer found 600 bytes taking 4 s under
// ASan) stop here, the rest of the file marked truncated.
constexpr size_t kReadsPerToken = 32;

constexpr std::array<std::string_view, 35> kKeywords{
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool is_keyword(std::string_view name) {
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

// Operators that join two operands into one expression the rules do not look into.
constexpr std::array<std::string_view, 19> kBinaryOps{
    "+", "-",  "*",  "/",  "//", "%", "**", "@",  "|", "&",
    "^", "<<", ">>", "==", "!=", "<", ">",  "<=", ">="};
constexpr std::array<std::string_view, 7> kBinaryWords{"and", "or", "in",  "is",
                                                       "not", "if", "else"};

bool is_op(const Token& t, std::string_view op) {
  return t.kind == TokenKind::kOp && t.text == op;
}
bool is_name(const Token& t, std::string_view name) {
  return t.kind == TokenKind::kName && t.text == name;
}

}  // namespace

std::vector<std::string> ignored_ids(std::string_view comment) {
  std::vector<std::string> out;
  size_t at = comment.find("sparkdoc: ignore");
  if (at == std::string_view::npos) return out;
  std::string_view rest = comment.substr(at + 16);
  std::string id;
  for (char c : rest) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      id += c;
    } else if (!id.empty()) {
      out.push_back(std::move(id));
      id.clear();
    }
  }
  if (!id.empty()) out.push_back(std::move(id));
  return out;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens) : src_(text) {
    for (Token& t : tokens) {
      if (t.kind == TokenKind::kComment) {
        auto ids = ignored_ids(t.text);
        if (!ids.empty()) {
          auto& list = out_.ignored[t.line];
          list.insert(list.end(), ids.begin(), ids.end());
          // A comment on a line of its own is about the line below it as well.
          if (tokens_.empty() || tokens_.back().line != t.line) {
            auto& next = out_.ignored[t.line + 1];
            next.insert(next.end(), ids.begin(), ids.end());
          }
        }
        continue;
      }
      tokens_.push_back(std::move(t));
    }
  }

  PySource run() {
    reads_left_ = kReadsPerToken * tokens_.size() + 1024;
    size_t i = 0;
    while (i < tokens_.size()) {
      size_t end = i;
      while (end < tokens_.size() && tokens_[end].kind != TokenKind::kNewline) ++end;
      end_ = end;
      statement(i);
      i = end + 1;
    }
    for (const Token& t : tokens_) out_.lines = std::max(out_.lines, t.line);
    return std::move(out_);
  }

 private:
  const Token& tok(size_t i) const { return tokens_[i]; }
  bool has(size_t i) const { return i < end_; }

  size_t offset(size_t i) const { return static_cast<size_t>(tok(i).text.data() - src_.data()); }
  // The source text of tokens [first, last].
  std::string slice(size_t first, size_t last) const {
    if (last < first || last >= tokens_.size()) return "";
    size_t a = offset(first);
    size_t b = offset(last) + tok(last).text.size();
    return std::string(src_.substr(a, b - a));
  }

  std::string resolve(std::string_view dotted) const {
    size_t dot = dotted.find('.');
    std::string_view head = dotted.substr(0, dot);
    auto it = bindings_.find(std::string(head));
    if (it == bindings_.end()) return std::string(dotted);
    return it->second + (dot == std::string_view::npos ? "" : std::string(dotted.substr(dot)));
  }

  void bind(std::string name, std::string qualified, uint32_t line) {
    bindings_[name] = qualified;
    out_.imports.push_back(PyImport{std::move(name), std::move(qualified), line});
  }

  // Index just past the bracket that closes the one at `open` (or end_).
  size_t skip_balanced(size_t open) const {
    int depth = 0;
    for (size_t i = open; has(i); ++i) {
      const Token& t = tok(i);
      if (t.kind != TokenKind::kOp) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (--depth == 0) return i + 1;
      }
    }
    return end_;
  }

  bool starts_expression(size_t i) const {
    const Token& t = tok(i);
    switch (t.kind) {
      case TokenKind::kNumber:
      case TokenKind::kString:
        return true;
      case TokenKind::kName:
        return !is_keyword(t.text) || t.text == "True" || t.text == "False" || t.text == "None" ||
               t.text == "not" || t.text == "lambda" || t.text == "await";
      case TokenKind::kOp:
        return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" ||
               t.text == "~";
      default:
        return false;
    }
  }

  void statement(size_t i) {
    if (!has(i)) return;
    const Token& first = tok(i);
    if (is_name(first, "import")) return import_names(i + 1);
    if (is_name(first, "from")) return from_import(i + 1);
    if (is_name(first, "def") || is_name(first, "class")) {
      // Parameters and bases are not calls the rules judge; what follows the colon on the same
      // line is a body.
      size_t j = i + 1;
      while (has(j) && !is_op(tok(j), "(") && !is_op(tok(j), ":")) ++j;
      if (has(j) && is_op(tok(j), "(")) j = skip_balanced(j);
      while (has(j) && !is_op(tok(j), ":")) ++j;
      return scan(j + 1);
    }
    if (is_op(first, "@")) return scan(i + 1);
    if (assignment(i)) return;
    scan(i);
  }

  // Every expression from i to the line's end, for the calls in them.
  void scan(size_t i) {
    while (has(i)) {
      if (starts_expression(i)) {
        size_t before = i;
        parse_expr(i);
        if (i == before) ++i;
      } else {
        ++i;
      }
    }
  }

  // `a = b = value` or `a: T = value`: records the targets and the value; false when the line
  // has no top-level '='.
  bool assignment(size_t begin) {
    std::vector<size_t> equals;
    int depth = 0;
    for (size_t i = begin; has(i); ++i) {
      const Token& t = tok(i);
      if (t.kind != TokenKind::kOp) {
        if (depth == 0 && t.kind == TokenKind::kName &&
            (t.text == "lambda" || t.text == "for" || t.text == "with" || t.text == "if")) {
          break;
        }
        continue;
      }
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if ((t.text == ")" || t.text == "]" || t.text == "}") && depth > 0) --depth;
      if (depth == 0 && t.text == "=") equals.push_back(i);
    }
    if (equals.empty() || equals.front() == begin) return false;
    size_t value_at = equals.back() + 1;
    if (!has(value_at)) return false;
    // Calls inside the targets (subscripts such as d[f(x)]) count too.
    size_t saved_end = end_;
    end_ = equals.front();
    scan(begin);
    end_ = saved_end;
    size_t pos = value_at;
    PyValue value = parse_expr(pos);
    scan(pos);
    size_t start = begin;
    for (size_t e : equals) {
      size_t last = e - 1;
      // An annotation: the target is what comes before its top-level colon.
      int d = 0;
      for (size_t k = start; k < e; ++k) {
        const Token& t = tok(k);
        if (t.kind != TokenKind::kOp) continue;
        if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
        if ((t.text == ")" || t.text == "]" || t.text == "}") && d > 0) --d;
        if (d == 0 && t.text == ":") {
          last = k - 1;
          break;
        }
      }
      if (last >= start)
        out_.assignments.push_back(PyAssignment{slice(start, last), value, tok(start).line});
      start = e + 1;
    }
    return true;
  }

  // `import a.b as c, d`.
  void import_names(size_t i) {
    while (has(i)) {
      std::string dotted;
      while (has(i) && (tok(i).kind == TokenKind::kName || is_op(tok(i), "."))) {
        if (is_name(tok(i), "as")) break;
        dotted += tok(i).text;
        ++i;
      }
      if (dotted.empty()) {
        ++i;
        continue;
      }
      if (has(i + 1) && is_name(tok(i), "as") && tok(i + 1).kind == TokenKind::kName) {
        bind(std::string(tok(i + 1).text), dotted, tok(i).line);
        i += 2;
      } else {
        std::string head = dotted.substr(0, dotted.find('.'));
        bind(head, head, tok(i - 1).line);
        if (head != dotted) out_.imports.push_back(PyImport{dotted, dotted, tok(i - 1).line});
      }
      while (has(i) && !is_op(tok(i), ",")) ++i;
      ++i;
    }
  }

  // `from .pkg.mod import (a as b, c)` and `from m import *`.
  void from_import(size_t i) {
    std::string module;
    while (has(i) && !is_name(tok(i), "import")) {
      module += tok(i).text;
      ++i;
    }
    ++i;
    while (has(i)) {
      const Token& t = tok(i);
      if (t.kind == TokenKind::kName) {
        std::string name(t.text);
        std::string bound = name;
        if (has(i + 2) && is_name(tok(i + 1), "as") && tok(i + 2).kind == TokenKind::kName) {
          bound = std::string(tok(i + 2).text);
          i += 2;
        }
        bind(bound, module + "." + name, t.line);
      } else if (is_op(t, "*")) {
        out_.imports.push_back(PyImport{"*", module + ".*", t.line});
      }
      ++i;
    }
  }

  PyValue other(size_t first, size_t last) const {
    PyValue v;
    v.kind = PyValue::Kind::kOther;
    v.text = slice(first, last);
    v.line = tok(first).line;
    return v;
  }

  PyValue parse_expr(size_t& i) {
    const size_t start = i;
    if (!has(i)) return PyValue{};
    if (reads_left_ == 0) {
      out_.truncated = true;
      i = end_;
      return PyValue{};
    }
    --reads_left_;
    if (depth_ >= kMaxDepth) {
      out_.truncated = true;
      size_t j = i;
      while (has(j) && !is_op(tok(j), ",") && !is_op(tok(j), ")") && !is_op(tok(j), "]") &&
             !is_op(tok(j), "}")) {
        j = (is_op(tok(j), "(") || is_op(tok(j), "[") || is_op(tok(j), "{")) ? skip_balanced(j)
                                                                             : j + 1;
      }
      i = j;
      return other(start, j > start ? j - 1 : start);
    }
    ++depth_;
    PyValue v = parse_unary(i);
    bool joined = false;
    while (has(i)) {
      const Token& t = tok(i);
      bool binary =
          (t.kind == TokenKind::kOp &&
           std::find(kBinaryOps.begin(), kBinaryOps.end(), t.text) != kBinaryOps.end()) ||
          (t.kind == TokenKind::kName &&
           std::find(kBinaryWords.begin(), kBinaryWords.end(), t.text) != kBinaryWords.end());
      if (!binary) break;
      ++i;
      if (is_name(t, "not") && has(i) && is_name(tok(i), "in")) ++i;
      if (!has(i) || !starts_expression(i)) break;
      parse_unary(i);
      joined = true;
    }
    --depth_;
    if (joined) return other(start, i - 1);
    return v;
  }

  PyValue parse_unary(size_t& i) {
    const size_t start = i;
    const Token& t = tok(i);
    if (is_op(t, "-") || is_op(t, "+") || is_op(t, "~") || is_name(t, "not") ||
        is_name(t, "await")) {
      ++i;
      if (!has(i)) return other(start, start);
      PyValue inner = parse_unary(i);
      if (is_op(t, "-") &&
          (inner.kind == PyValue::Kind::kInt || inner.kind == PyValue::Kind::kFloat)) {
        inner.integer = -inner.integer;
        inner.number = -inner.number;
        inner.line = t.line;
        return inner;
      }
      if (is_op(t, "+") || is_name(t, "await")) return inner;
      return other(start, i - 1);
    }
    if (is_name(t, "lambda")) {
      while (has(i) && !is_op(tok(i), ":")) ++i;
      ++i;
      if (has(i)) parse_expr(i);
      return other(start, i - 1);
    }
    return parse_primary(i);
  }

  PyValue number(const Token& t) const {
    PyValue v;
    v.line = t.line;
    std::string digits;
    for (char c : t.text) {
      if (c != '_') digits += c;
    }
    const bool prefixed = digits.size() > 1 && digits[0] == '0' &&
                          std::isalpha(static_cast<unsigned char>(digits[1]));
    if (!digits.empty() && (digits.back() == 'j' || digits.back() == 'J')) {
      v.kind = PyValue::Kind::kOther;
      v.text = std::string(t.text);
      return v;
    }
    if (prefixed) {
      int base = std::tolower(static_cast<unsigned char>(digits[1])) == 'x'   ? 16
                 : std::tolower(static_cast<unsigned char>(digits[1])) == 'o' ? 8
                                                                              : 2;
      int64_t value = 0;
      auto r = std::from_chars(digits.data() + 2, digits.data() + digits.size(), value, base);
      if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) {
        v.kind = PyValue::Kind::kInt;
        v.integer = value;
        v.number = static_cast<double>(value);
        return v;
      }
      v.kind = PyValue::Kind::kOther;
      v.text = std::string(t.text);
      return v;
    }
    if (digits.find_first_of(".eE") == std::string::npos) {
      int64_t value = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (r.ec == std::errc() && r.ptr == digits.data() + digits.size()) {
        v.kind = PyValue::Kind::kInt;
        v.integer = value;
        v.number = static_cast<double>(value);
        return v;
      }
    }
    char* end = nullptr;
    double d = std::strtod(digits.c_str(), &end);
    if (end != nullptr && *end == '\0' && !digits.empty()) {
      v.kind = PyValue::Kind::kFloat;
      v.number = d;
      return v;
    }
    v.kind = PyValue::Kind::kOther;
    v.text = std::string(t.text);
    return v;
  }

  // Elements of a bracketed display starting at `open`, until its closing bracket.
  PyValue display(size_t& i, PyValue::Kind kind, std::string_view close) {
    const size_t start = i;
    ++i;
    PyValue v;
    v.kind = kind;
    v.line = tok(start).line;
    bool dict = false;
    bool comma = false;
    while (has(i) && !is_op(tok(i), close)) {
      if (is_op(tok(i), ",")) {
        comma = true;
        ++i;
        continue;
      }
      if (is_name(tok(i), "for") || is_name(tok(i), "async")) {
        // A comprehension: read what the rest of it calls, keep its text.
        size_t j = i;
        i = skip_balanced(start);
        size_t saved = end_;
        end_ = i - 1;
        scan(j);
        end_ = saved;
        return other(start, i - 1);
      }
      if (is_op(tok(i), "**") || is_op(tok(i), "*")) {
        ++i;
        if (has(i)) parse_expr(i);
        continue;
      }
      if (is_op(tok(i), ":")) {
        dict = true;
        ++i;
        continue;
      }
      size_t before = i;
      PyValue item = parse_expr(i);
      if (i == before) ++i;
      v.items.push_back(std::move(item));
    }
    if (has(i)) ++i;                                                        // the closing bracket
    if (kind == PyValue::Kind::kDict && !dict) return other(start, i - 1);  // a set
    if (kind == PyValue::Kind::kDict && v.items.size() % 2 != 0) return other(start, i - 1);
    if (kind == PyValue::Kind::kTuple && v.items.size() == 1 && !comma) return v.items.front();
    return v;
  }

  PyValue parse_atom(size_t& i) {
    const Token& t = tok(i);
    PyValue v;
    v.line = t.line;
    if (t.kind == TokenKind::kName) {
      ++i;
      if (t.text == "True" || t.text == "False") {
        v.kind = PyValue::Kind::kBool;
        v.boolean = t.text == "True";
      } else if (t.text == "None") {
        v.kind = PyValue::Kind::kNone;
      } else if (is_keyword(t.text)) {
        v.kind = PyValue::Kind::kOther;
        v.text = std::string(t.text);
      } else {
        v.kind = PyValue::Kind::kName;
        v.text = std::string(t.text);
      }
      return v;
    }
    if (t.kind == TokenKind::kNumber) {
      ++i;
      return number(t);
    }
    if (t.kind == TokenKind::kString) {
      v.kind = PyValue::Kind::kString;
      while (has(i) && tok(i).kind == TokenKind::kString) {  // adjacent literals join
        v.text += tok(i).value;
        v.fstring = v.fstring || tok(i).fstring;
        ++i;
      }
      return v;
    }
    if (is_op(t, "(")) return display(i, PyValue::Kind::kTuple, ")");
    if (is_op(t, "[")) return display(i, PyValue::Kind::kList, "]");
    if (is_op(t, "{")) return display(i, PyValue::Kind::kDict, "}");
    ++i;
    return other(i - 1, i - 1);
  }

  PyValue parse_primary(size_t& i) {
    const size_t start = i;
    PyValue v = parse_atom(i);
    bool plain_name = v.kind == PyValue::Kind::kName;
    while (has(i)) {
      const Token& t = tok(i);
      if (is_op(t, ".") && has(i + 1) && tok(i + 1).kind == TokenKind::kName) {
        if (v.kind == PyValue::Kind::kName) {
          v.text += "." + std::string(tok(i + 1).text);
        } else if (v.kind == PyValue::Kind::kCall && v.call) {
          // A method of a call's result: AutoModel.from_pretrained(...).to
          std::string chained = v.call->callee + "()." + std::string(tok(i + 1).text);
          v = PyValue{};
          v.kind = PyValue::Kind::kName;
          v.text = std::move(chained);
          v.line = t.line;
          plain_name = false;
        } else {
          v = other(start, i + 1);
          plain_name = false;
        }
        i += 2;
      } else if (is_op(t, "(")) {
        v = call(start, i, v, plain_name);
        plain_name = false;
      } else if (is_op(t, "[")) {
        size_t open = i;
        i = skip_balanced(open);
        size_t saved = end_;
        end_ = i > 0 ? i - 1 : i;
        scan(open + 1);
        end_ = saved;
        v = other(start, i - 1);
        plain_name = false;
      } else {
        break;
      }
    }
    if (plain_name) v.text = resolve(v.text);
    return v;
  }

  // The call whose callee `f` spans [start, open) and whose '(' is at `open`.
  PyValue call(size_t start, size_t& i, const PyValue& f, bool plain_name) {
    PyCall c;
    c.written = f.kind == PyValue::Kind::kName ? f.text : slice(start, i - 1);
    c.callee = plain_name ? resolve(f.text) : c.written;
    c.line = tok(start).line;
    // The outer call goes first in the list; its slot is filled once its arguments are read.
    const size_t slot = out_.calls.size();
    out_.calls.emplace_back();
    const size_t open = i;
    ++i;
    ++depth_;
    while (has(i) && !is_op(tok(i), ")")) {
      const Token& t = tok(i);
      if (is_op(t, ",")) {
        ++i;
        continue;
      }
      if (depth_ >= kMaxDepth) {
        out_.truncated = true;
        i = skip_balanced(open) - 1;
        break;
      }
      PyArg arg;
      if (is_op(t, "**") || is_op(t, "*")) {
        arg.keyword = std::string(t.text);
        if (t.text == "**") c.unpacks_kwargs = true;
        ++i;
      } else if (t.kind == TokenKind::kName && has(i + 1) && is_op(tok(i + 1), "=")) {
        arg.keyword = std::string(t.text);
        i += 2;
      }
      if (!has(i)) break;
      size_t before = i;
      arg.value = parse_expr(i);
      if (i == before) {
        ++i;
        continue;
      }
      if (has(i) && (is_name(tok(i), "for") || is_name(tok(i), "async"))) {
        // A generator argument: f(x for x in y).
        while (has(i) && !is_op(tok(i), ")") && !is_op(tok(i), ",")) {
          i = (is_op(tok(i), "(") || is_op(tok(i), "[") || is_op(tok(i), "{")) ? skip_balanced(i)
                                                                               : i + 1;
        }
      }
      c.args.push_back(std::move(arg));
    }
    --depth_;
    if (has(i)) ++i;  // ')'
    auto shared = std::make_shared<PyCall>(c);
    out_.calls[slot] = std::move(c);
    PyValue v;
    v.kind = PyValue::Kind::kCall;
    v.text = slice(start, i - 1);
    v.call = std::move(shared);
    v.line = tok(start).line;
    return v;
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  size_t end_ = 0;
  int depth_ = 0;
  size_t reads_left_ = 0;
  std::map<std::string, std::string> bindings_;
  PySource out_;
};

}  // namespace

PySource parse_python_source(std::string_view text) {
  return Parser(text, tokenize_python(text)).run();
}

}  // namespace sparkdoc::job
