// A strict pull reader for the small JSON documents of the safetensors format: headers and
// model.safetensors.index.json. It accepts RFC 8259 JSON only (no comments, no trailing commas,
// no leading zeros, no lone surrogates) and never allocates beyond the strings it returns.
// Nesting is limited so that hostile input cannot exhaust the stack.
//
// Internal to the safetensors component.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparkdoc::safetensors::detail {

// True when `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past
// U+10FFFF).
bool valid_utf8(std::string_view bytes);

class JsonCursor {
 public:
  static constexpr int kMaxDepth = 64;

  explicit JsonCursor(std::string_view text) : text_(text) {}

  // Each returns false on malformed input and leaves the reason in error().
  bool begin_object();  // '{'
  // Next member of the object being read: true with the key (cursor at its value), or false with
  // done() set at '}' or error() set on malformed input.
  bool next_member(std::string& key);
  bool begin_array();  // '['
  // Next element of the array being read: true when one follows (cursor at it); false at ']'
  // (done()) or on error.
  bool next_element();
  bool read_string(std::string& out);
  // A non-negative integer without fraction or exponent that fits 64 bits.
  bool read_u64(uint64_t& out);
  bool at_null();  // true and consumed when the value is `null`
  bool skip_value();
  // After the top-level value: only whitespace may follow.
  bool at_end();

  bool done() const { return done_; }
  const std::string& error() const { return error_; }
  size_t offset() const { return pos_; }
  // The JSON type of the value at the cursor, for messages: "object", "string", ...
  std::string_view peek_kind();

 private:
  void skip_ws();
  bool fail(std::string message);
  bool expect(char c, std::string_view what);
  bool open(char c, std::string_view what);
  // Before a member or element: the closing bracket (sets done_) or, after the first, a comma.
  bool advance(char close, std::string_view container);
  bool skip_number();
  bool skip_literal(std::string_view word);
  bool skip_value_at(int depth);
  bool read_hex4(uint32_t& out);

  std::string_view text_;
  size_t pos_ = 0;
  bool done_ = false;
  // Per open container: whether a member/element has been read (so a ',' is due).
  uint64_t first_bits_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace sparkdoc::safetensors::detail
