#include "job/shell.h"

#include <cctype>
#include <string>

namespace sparkdoc::job {
namespace {

bool is_assignment(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(word[0])) && word[0] != '_') return false;
  for (size_t i = 1; i < eq; ++i) {
    if (!std::isalnum(static_cast<unsigned char>(word[i])) && word[i] != '_') return false;
  }
  return true;
}

class Splitter {
 public:
  Splitter(std::string_view s, uint32_t first_line) : s_(s), line_(first_line) {}

  std::vector<Command> run() {
    while (i_ < s_.size()) step();
    finish_word();
    finish_command();
    return std::move(out_);
  }

 private:
  void step() {
    const char c = s_[i_];
    if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
      i_ += 2;
      ++line_;
      return;
    }
    if (c == '\n') {
      finish_word();
      finish_command();
      ++i_;
      ++line_;
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      finish_word();
      ++i_;
      return;
    }
    if (c == '#' && !in_word_) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return;
    }
    if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      finish_word();
      finish_command();
      ++i_;
      return;
    }
    if (c == '\'') return single_quoted();
    if (c == '"') return double_quoted();
    if (c == '\\' && i_ + 1 < s_.size()) {
      start_word();
      word_ += s_[i_ + 1];
      i_ += 2;
      return;
    }
    if (c == '$' && i_ + 1 < s_.size() && (s_[i_ + 1] == '(' || s_[i_ + 1] == '{')) {
      return substitution();
    }
    if (c == '`') {
      start_word();
      size_t end = s_.find('`', i_ + 1);
      end = end == std::string_view::npos ? s_.size() : end + 1;
      count_lines(i_, end);
      word_.append(s_.substr(i_, end - i_));
      i_ = end;
      return;
    }
    start_word();
    word_ += c;
    ++i_;
  }

  void single_quoted() {
    start_word();
    size_t end = s_.find('\'', i_ + 1);
    if (end == std::string_view::npos) end = s_.size();
    word_.append(s_.substr(i_ + 1, end - i_ - 1));
    count_lines(i_, end);
    i_ = end < s_.size() ? end + 1 : end;
  }

  void double_quoted() {
    start_word();
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size()) {
        char n = s_[i_ + 1];
        if (n == '\n') {
          ++line_;
        } else if (n == '"' || n == '\\' || n == '$' || n == '`') {
          word_ += n;
        } else {
          word_ += c;
          word_ += n;
        }
        i_ += 2;
        continue;
      }
      if (c == '\n') ++line_;
      word_ += c;
      ++i_;
    }
    if (i_ < s_.size()) ++i_;
  }

  // $( ... ) or ${ ... }, kept as written with its nesting.
  void substitution() {
    start_word();
    const char open = s_[i_ + 1];
    const char close = open == '(' ? ')' : '}';
    size_t j = i_ + 2;
    int depth = 1;
    while (j < s_.size() && depth > 0) {
      if (s_[j] == open) ++depth;
      if (s_[j] == close) --depth;
      ++j;
    }
    count_lines(i_, j);
    word_.append(s_.substr(i_, j - i_));
    i_ = j;
  }

  void count_lines(size_t from, size_t to) {
    for (size_t k = from; k < to && k < s_.size(); ++k) {
      if (s_[k] == '\n') ++line_;
    }
  }

  void start_word() {
    if (!in_word_) {
      in_word_ = true;
      if (words_.empty()) command_line_ = line_;
      word_start_ = i_;
    }
  }

  void finish_word() {
    if (!in_word_) return;
    in_word_ = false;
    if (words_.empty()) text_start_ = word_start_;
    text_end_ = i_;
    words_.push_back(std::move(word_));
    word_.clear();
  }

  void finish_command() {
    if (words_.empty()) return;
    Command c;
    c.line = command_line_;
    c.text = std::string(s_.substr(text_start_, text_end_ - text_start_));
    size_t k = 0;
    while (k < words_.size() && is_assignment(words_[k])) {
      size_t eq = words_[k].find('=');
      c.env.emplace_back(words_[k].substr(0, eq), words_[k].substr(eq + 1));
      ++k;
    }
    c.argv.assign(words_.begin() + static_cast<std::ptrdiff_t>(k), words_.end());
    words_.clear();
    out_.push_back(std::move(c));
  }

  std::string_view s_;
  size_t i_ = 0;
  uint32_t line_;
  bool in_word_ = false;
  std::string word_;
  size_t word_start_ = 0;
  std::vector<std::string> words_;
  uint32_t command_line_ = 0;
  size_t text_start_ = 0;
  size_t text_end_ = 0;
  std::vector<Command> out_;
};

}  // namespace

std::vector<Command> parse_shell(std::string_view text, uint32_t first_line) {
  return Splitter(text, first_line).run();
}

}  // namespace sparkdoc::job
