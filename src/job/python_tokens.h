// A Python tokenizer for reading training scripts without running them (sparkdoc lint). It
// follows the language reference's lexical rules as far as reading calls and literals needs:
// names, numbers, every string form (single, double and triple quotes; r, b, u and f prefixes in
// any case and order; f-strings whose replacement fields hold quotes of their own, as Python 3.12
// allows), comments, explicit line joining with a backslash, implicit joining inside brackets,
// and logical line ends. Indentation is not tracked: no rule needs it.
//
// Any bytes are accepted: an unterminated string runs to the end of the input and is marked, a
// byte that starts no token becomes an error token of its own. Never throws; linear in the input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::job {

enum class TokenKind : uint8_t {
  kName,     // identifiers and keywords (True, None, def, import ...)
  kNumber,   // 12, 0x1f, 2_000, 1e-3, 3.5j
  kString,   // one string literal (adjacent literals are separate tokens)
  kOp,       // punctuation and operators: ( ) [ ] { } , : . = ** -> := == ...
  kNewline,  // the end of a logical line (outside brackets)
  kComment,  // "# ..." without the newline
  kError,    // a byte that starts no token
};

struct Token {
  TokenKind kind = TokenKind::kError;
  std::string_view text;  // the source text of the token (a view into the tokenized input)
  uint32_t line = 1;      // 1-based line of the token's first character
  // Strings: the value between the quotes, escapes decoded for non-raw strings (\n, \t, \\, \',
  // \", \xNN as a byte; others kept as written); f-strings keep their replacement fields as
  // written. Empty for other tokens.
  std::string value;
  bool fstring = false;       // an f-string: its value is not a constant
  bool unterminated = false;  // a string that reached the end of the input
};

// Tokenizes `source`. The tokens' text views point into `source`, which must outlive them.
std::vector<Token> tokenize_python(std::string_view source);

}  // namespace sparkdoc::job
