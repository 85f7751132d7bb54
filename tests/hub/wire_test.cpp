// The Hub fetcher's parsers of what a server and the user hand it: header lines, Content-Range,
// Retry-After, the token, and the model id that becomes folder names in the cache.
#include "hub/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "hub/model_id.h"

namespace sparkdoc::hub {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HeaderLine, NameAndTrimmedValue) {
  auto h = parse_header_line("Content-Range:  bytes 0-7/99 \r\n");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "Content-Range");
  EXPECT_EQ(h->value, "bytes 0-7/99");
  auto empty = parse_header_line("X-Empty:\r\n");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->value, "");
  EXPECT_FALSE(parse_header_line("HTTP/1.1 302 Found\r\n"));
  EXPECT_FALSE(parse_header_line("\r\n"));
  EXPECT_FALSE(parse_header_line(": no name\r\n"));
  EXPECT_FALSE(parse_header_line("Bad Name: x\r\n"));
  EXPECT_FALSE(parse_header_line("no colon at all"));
  EXPECT_TRUE(is_status_line("HTTP/2 206 \r\n"));
  EXPECT_FALSE(is_status_line("Location: /cdn\r\n"));
}

TEST(ContentRange, RangesWithAndWithoutTheLength) {
  EXPECT_EQ(parse_content_range("bytes 0-7/12345"), (ContentRange{0, 7, 12345}));
  EXPECT_EQ(parse_content_range("bytes 8-1023/*"), (ContentRange{8, 1023, std::nullopt}));
  EXPECT_EQ(parse_content_range(" bytes 0-0/1 "), (ContentRange{0, 0, 1}));
  for (const char* bad : {"", "bytes", "bytes 7-0/10", "bytes 0-10/10", "bytes 0-7", "items 0-7/10",
                          "bytes -1-7/10", "bytes 0-7/x", "bytes 0- 7/10", "bytes +0-7/10",
                          "bytes 0-18446744073709551616/*", "bytes */10", "bytes 0/7-10"}) {
    EXPECT_FALSE(parse_content_range(bad)) << bad;
  }
}

TEST(RetryAfter, SecondsOrTheDateAsSent) {
  EXPECT_EQ(retry_after_text("30"), "30 s");
  EXPECT_EQ(retry_after_text(" 0 "), "0 s");
  EXPECT_EQ(retry_after_text("Wed, 21 Oct 2015 07:28:00 GMT"), "Wed, 21 Oct 2015 07:28:00 GMT");
  EXPECT_EQ(retry_after_text(""), "");
  EXPECT_EQ(retry_after_text("\x1b[31mred"), "");
  EXPECT_EQ(retry_after_text(std::string(65, 'x')), "");
}

TEST(Token, OneWordOfVisibleAscii) {
  EXPECT_EQ(parse_token("hf_abc123\n", "file").value(), "hf_abc123");
  EXPECT_EQ(parse_token("  hf_abc123  \r\n", "file").value(), "hf_abc123");
  auto empty = parse_token(" \n", "the file");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().why, Why::kAbsent);
  // A second line would become a second request header.
  auto injected = parse_token("hf_abc\r\nX-Evil: 1", "HF_TOKEN");
  ASSERT_FALSE(injected);
  EXPECT_THAT(injected.error().message, HasSubstr("HF_TOKEN is not a single token"));
  EXPECT_THAT(injected.error().message, Not(HasSubstr("hf_abc")));
  EXPECT_FALSE(parse_token("hf_a b", "HF_TOKEN"));
  EXPECT_FALSE(parse_token(std::string(4097, 'a'), "HF_TOKEN"));
}

TEST(ModelIdShape, PathsAreNotModels) {
  EXPECT_TRUE(looks_like_model_id("org/name"));
  EXPECT_TRUE(looks_like_model_id("org/name@v1.0"));
  for (const char* path : {"name", "/abs/path", "./org/name", "../org", "~/models", "org/name/x",
                           "org/", "/name", "a/b/c"}) {
    EXPECT_FALSE(looks_like_model_id(path)) << path;
  }
}

TEST(ModelId, RevisionFromTheIdOrTheOption) {
  auto plain = parse_model_id("Qwen/Qwen3-30B-A3B");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->org, "Qwen");
  EXPECT_EQ(plain->name, "Qwen3-30B-A3B");
  EXPECT_EQ(plain->revision, "main");
  EXPECT_FALSE(plain->revision_given);
  EXPECT_EQ(cache_entry_name(*plain), "models--Qwen--Qwen3-30B-A3B");
  EXPECT_EQ(plain->label(), "Qwen/Qwen3-30B-A3B@main");
  auto at = parse_model_id("org/name@v2.1_rc");
  ASSERT_TRUE(at);
  EXPECT_EQ(at->revision, "v2.1_rc");
  EXPECT_TRUE(at->revision_given);
  EXPECT_EQ(parse_model_id("org/name", "abc123")->revision, "abc123");
  EXPECT_TRUE(parse_model_id("org/name@main", "main"));
  auto both = parse_model_id("org/name@v1", "v2");
  ASSERT_FALSE(both);
  EXPECT_THAT(both.error().message, HasSubstr("name one"));
}

TEST(ModelId, AHostileIdCannotLeaveTheCacheFolder) {
  for (const char* bad :
       {"../name", "org/..", "org/..x", "org/.hidden", "org/name-", "-org/name", "org/na--me",
        "org/name@..", "org/name@../../etc", "org/name@refs/pr/1", "org/na\nme", "org/na me",
        "org/na%2fme", "org/name@", "org/name@.x", "org@x/name", "org/name\x7f", "org/n\xc3\xa9"}) {
    EXPECT_FALSE(parse_model_id(bad)) << bad;
  }
  EXPECT_FALSE(parse_model_id("org/name", "../x"));
  EXPECT_FALSE(parse_model_id("org/name", "a/b"));
  // Appended rather than concatenated: g++ 12 warns falsely about `"org/" + std::string(97, 'n')`.
  std::string longest = "org/";
  longest.append(96, 'n');
  EXPECT_TRUE(parse_model_id(longest));
  EXPECT_FALSE(parse_model_id(longest + "n"));
  // A revision may hold "--" (a branch name), which no folder name depends on.
  EXPECT_TRUE(parse_model_id("org/name@a--b"));
}

}  // namespace
}  // namespace sparkdoc::hub
