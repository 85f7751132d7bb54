#include "core/printable.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(Printable, ShowsTerminalControlsAsEscapes) {
  // The red-team string: erase the line above and paint a verdict over it.
  EXPECT_EQ(printable("a\x1b[1A\x1b[2K\rALL CHECKS PASS\n"),
            "a\\x1b[1A\\x1b[2K\\rALL CHECKS PASS\\n");
  EXPECT_EQ(printable(std::string_view("nul\0bell\x07 del\x7f", 14)), "nul\\x00bell\\x07 del\\x7f");
  EXPECT_EQ(printable("tab\there"), "tab\\there");
  // C1 CSI (U+009B) and a right-to-left override, both valid UTF-8.
  EXPECT_EQ(printable("x\xc2\x9b"
                      "31m \xe2\x80\xae"
                      "cod"),
            "x\\u009b31m \\u202ecod");
  // Bytes that are not UTF-8: a lone continuation, an overlong '/', a surrogate, a cut lead.
  EXPECT_EQ(printable("\x80 \xc0\xaf \xed\xa0\x80 \xe2\x82"),
            "\\x80 \\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x82");
}

TEST(Printable, LeavesTextAndJsonAlone) {
  EXPECT_EQ(printable("Qwen3.5-35B-A3B, 24.4 GB \xe2\x80\x94 \xf0\x9f\x9a\x80 caf\xc3\xa9"),
            "Qwen3.5-35B-A3B, 24.4 GB \xe2\x80\x94 \xf0\x9f\x9a\x80 caf\xc3\xa9");
  EXPECT_EQ(printable(R"({"name": "a\u001bb", "path": "C:\\x"})"),
            R"({"name": "a\u001bb", "path": "C:\\x"})");
  PrintableOptions lines;
  lines.keep_lines = true;
  EXPECT_EQ(printable("one\ttwo\nthree\r\n", lines), "one\ttwo\nthree\\r\n");
}

TEST(Printable, PassesOnlyTheSequencesAllowed) {
  PrintableOptions own;
  own.allowed_sequences = own_color_sequences();
  std::string verdict = std::string(color::kBoldRed) + "FAIL" + std::string(color::kReset);
  EXPECT_EQ(printable(verdict, own), verdict);
  // Concealed text (SGR 8) and cursor movement are not sparkdoc's.
  EXPECT_EQ(printable("\x1b[8mhidden\x1b[0m\x1b[H", own), "\\x1b[8mhidden\x1b[0m\\x1b[H");
}

TEST(Printable, IncompleteTailIsHeldBack) {
  PrintableOptions own;
  own.allowed_sequences = own_color_sequences();
  EXPECT_EQ(printable_incomplete_tail("ok", own), 0u);
  EXPECT_EQ(printable_incomplete_tail("ok\x1b[1;3", own), 5u);  // may become \x1b[1;31m
  EXPECT_EQ(printable_incomplete_tail("ok\x1b[9", own), 0u);    // can become none of them
  EXPECT_EQ(printable_incomplete_tail("caf\xc3", own), 1u);
  EXPECT_EQ(printable_incomplete_tail("\xf0\x9f\x9a", own), 3u);
  EXPECT_EQ(printable_incomplete_tail("\xf0\x9f\x9a\x80", own), 0u);
  EXPECT_EQ(printable_incomplete_tail("\x80\x80", own), 0u);
}

}  // namespace
}  // namespace sparkdoc
