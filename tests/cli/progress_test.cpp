#include "cli/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace sparkdoc::cli {
namespace {

using std::chrono::milliseconds;

// What has been written to `f` so far.
std::string written(std::FILE* f) {
  std::fflush(f);
  long size = std::ftell(f);
  std::string out(static_cast<size_t>(size), '\0');
  std::rewind(f);
  size_t n = std::fread(out.data(), 1, out.size(), f);
  out.resize(n);
  std::fseek(f, 0, SEEK_END);
  return out;
}

TEST(ProgressLine, DrawsOverItselfAndClears) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(milliseconds(0), true, f);
    line.show("audit: 1/3 shared objects");
    line.show("audit: 2/3 shared objects");  // within 100 ms: skipped
    line.show("audit: 3/3 shared objects", true);
    line.clear();
    line.clear();  // once is enough
  }
  EXPECT_EQ(written(f),
            "\raudit: 1/3 shared objects\033[K\raudit: 3/3 shared objects\033[K\r\033[K");
  std::fclose(f);
}

// Work that ends before the delay shows nothing at all, not even the clearing.
TEST(ProgressLine, NothingBeforeTheDelay) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(milliseconds(1000), true, f);
    line.show("sparkdoc check: auditing native libraries 1/844", true);
  }
  EXPECT_EQ(written(f), "");
  {
    ProgressLine line(milliseconds(20), true, f);
    std::this_thread::sleep_for(milliseconds(40));
    line.show("later");
  }
  EXPECT_EQ(written(f), "\rlater\033[K\r\033[K");
  std::fclose(f);
}

TEST(ProgressLine, DisabledWritesNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine line(milliseconds(0), false, f);
    EXPECT_FALSE(line.enabled());
    line.show("x", true);
  }
  EXPECT_EQ(written(f), "");
  std::fclose(f);
}

}  // namespace
}  // namespace sparkdoc::cli
