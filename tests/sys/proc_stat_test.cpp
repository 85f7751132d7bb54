#include "sys/proc_stat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace sparkdoc::sys {
namespace {

using ::testing::HasSubstr;

// A python3 training process (kernel 6.8 layout: 52 fields).
constexpr std::string_view kPython =
    "4243 (python3) S 4242 4243 4200 34816 4243 4194560 1284393 0 12 0 81234 9912 0 0 20 0 57 "
    "0 81234567 95345266688 2391745 18446744073709551615 94371840 94376384 281474553786416 0 "
    "0 0 16386 16781312 134234626 0 0 0 17 3 0 0 0 0 0 94441680 94442696 118161408 "
    "281474553791351 281474553791419 281474553791419 281474553794530 0\n";

TEST(ProcStat, StateAndStartTime) {
  auto stat = parse_proc_stat(kPython);
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->start_ticks, 81234567u);
}

// A process may name itself anything (prctl PR_SET_NAME): spaces and ')' included.
TEST(ProcStat, CommWithSpacesAndParentheses) {
  auto stat = parse_proc_stat(
      "77 (a) Z 1 (b)) Z 1 77 77 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 424242 0 0 "
      "18446744073709551615\n");
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->state, 'Z');
  EXPECT_EQ(stat->start_ticks, 424242u);
}

TEST(ProcStat, DamagedTextIsAnError) {
  EXPECT_THAT(parse_proc_stat("").error().message, HasSubstr("no \"(comm)\""));
  EXPECT_THAT(parse_proc_stat("1 (init) S 0 1").error().message, HasSubstr("fields"));
  EXPECT_THAT(parse_proc_stat("1 (init) Sleeping 0").error().message, HasSubstr("one letter"));
  std::string bad_start(kPython);
  bad_start.replace(bad_start.find("81234567"), 8, "8123x567");
  EXPECT_THAT(parse_proc_stat(bad_start).error().message, HasSubstr("not a number"));
}

TEST(ProcStat, ThisProcessIsRunning) {
  EXPECT_FALSE(read_proc_stat(Root(), 0));
  EXPECT_FALSE(read_proc_stat(Root(), -5));
  auto self = read_proc_stat(Root(), ::getpid());
  ASSERT_TRUE(self) << self.error().message;
  if (std::getenv("SPARKDOC_TEST_EMULATOR")) {
    // qemu-user answers /proc/self/stat itself, with 0 for the state and most fields.
    GTEST_SKIP() << "under " << std::getenv("SPARKDOC_TEST_EMULATOR")
                 << ", which writes its own /proc/self/stat";
  }
  EXPECT_EQ(self->state, 'R');
  EXPECT_GT(self->start_ticks, 0u);
}

}  // namespace
}  // namespace sparkdoc::sys
