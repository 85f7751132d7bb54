#include "sys/limits.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

constexpr std::string_view kDefaultLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max stack size            8388608              unlimited            bytes     \n"
    "Max core file size        0                    unlimited            bytes     \n"
    "Max open files            1024                 1048576              files     \n"
    "Max locked memory         8388608              8388608              bytes     \n"
    "Max nice priority         0                    0                    \n";

TEST(ProcLimits, DesktopDefaults) {
  auto l = parse_limits(kDefaultLimits);
  ASSERT_TRUE(l) << l.error().message;
  ASSERT_TRUE(l->memlock_bytes);
  EXPECT_EQ(l->memlock_bytes->soft, 8388608u);
  EXPECT_EQ(l->memlock_bytes->hard, 8388608u);
  ASSERT_TRUE(l->stack_bytes);
  EXPECT_EQ(l->stack_bytes->soft, 8388608u);
  EXPECT_FALSE(l->stack_bytes->hard);  // unlimited
}

TEST(ProcLimits, SeedDockerFlags) {
  // docker run --ulimit memlock=-1 --ulimit stack=67108864 (000 §1)
  auto l = parse_limits(
      "Max stack size            67108864             67108864             bytes     \n"
      "Max locked memory         unlimited            unlimited            bytes     \n");
  ASSERT_TRUE(l);
  EXPECT_EQ(*l->memlock_bytes, Rlimit{});
  EXPECT_EQ(l->stack_bytes->soft, 67108864u);
}

TEST(ProcLimits, RejectsGarbage) {
  EXPECT_FALSE(parse_limits(""));
  EXPECT_FALSE(parse_limits("Limit   Soft Limit   Hard Limit   Units\n"));
  EXPECT_FALSE(parse_limits("Max locked memory         lots                 8388608\n"));
  EXPECT_FALSE(parse_limits("Max locked memory         8388608\n"));  // truncated
  EXPECT_FALSE(parse_limits("Max stack size            -1  -1  bytes\n"));
}

TEST(ReadLimits, FixtureRootReadsProcSelfLimits) {
  testing::TempTree tree;
  tree.write("proc/self/limits", std::string(kDefaultLimits));
  auto limits = read_limits(Root(tree.path()));
  ASSERT_TRUE(limits.memlock_bytes.ok());
  EXPECT_EQ(limits.memlock_bytes->soft, 8388608u);
  ASSERT_TRUE(limits.stack_bytes.ok());
  ASSERT_FALSE(limits.shm_size_bytes.ok());
  EXPECT_EQ(limits.shm_size_bytes.missing().why, Why::kAbsent);
}

TEST(ReadLimits, FixtureWithoutLimitsFileIsAbsent) {
  testing::TempTree tree;
  tree.write("proc/self/limits",
             "Max stack size            8388608              unlimited  bytes\n");
  auto only_stack = read_limits(Root(tree.path()));
  EXPECT_TRUE(only_stack.stack_bytes.ok());
  ASSERT_FALSE(only_stack.memlock_bytes.ok());
  EXPECT_EQ(only_stack.memlock_bytes.missing().why, Why::kAbsent);

  testing::TempTree empty;
  auto none = read_limits(Root(empty.path()));
  EXPECT_FALSE(none.memlock_bytes.ok());
  EXPECT_FALSE(none.stack_bytes.ok());
}

TEST(ReadLimits, LiveMachineAnswers) {
  auto limits = read_limits(Root());
  EXPECT_TRUE(limits.memlock_bytes.ok());
  EXPECT_TRUE(limits.stack_bytes.ok());
  if (limits.shm_size_bytes.ok()) {
    EXPECT_GT(*limits.shm_size_bytes, 0u);
  }
}

}  // namespace
}  // namespace sparkdoc::sys
