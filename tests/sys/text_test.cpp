#include "sys/text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sys/environment.h"

namespace sparkdoc::sys {
namespace {

TEST(ValidUtf8, KeepsWellFormedText) {
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(valid_utf8(std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

TEST(ValidUtf8, ReplacesWhatJsonRejects) {
  EXPECT_EQ(valid_utf8("/opt/caf\xE9/lib"), "/opt/caf?/lib");  // Latin-1
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "??");                     // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "???");                // UTF-16 surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), "????");           // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE2\x82"), "??");                     // truncated
  EXPECT_EQ(valid_utf8("\x80"), "?");                          // stray continuation
  for (std::string_view s : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF\xFE"}) {
    EXPECT_NO_THROW((void)nlohmann::json(valid_utf8(s)).dump());
  }
}

TEST(ValidUtf8, RecordedEnvironmentIsJsonSafe) {
  std::string entry = "LD_LIBRARY_PATH=/opt/caf\xE9/lib";
  char* envp[] = {entry.data(), nullptr};
  auto env = recorded_environment(envp);
  EXPECT_EQ(env.at("LD_LIBRARY_PATH"), "/opt/caf?/lib");
}

}  // namespace
}  // namespace sparkdoc::sys
