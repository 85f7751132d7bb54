#include "sys/nvidia_module.h"

#include <gtest/gtest.h>

namespace sparkdoc::sys {
namespace {

TEST(NvidiaModule, Gb10OpenModule) {
  auto m = parse_nvidia_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Thu Sep 25 19:04:10 UTC 2025\n"
      "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->version, "580.95.05");
  EXPECT_EQ(m->flavor, "open");
  EXPECT_EQ(m->line,
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  "
            "(dvs-builder@U16-I3-B03-4-3)  Thu Sep 25 19:04:10 UTC 2025");
}

TEST(NvidiaModule, X86Proprietary) {
  auto m = parse_nvidia_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Wed Feb 28 01:44:30 UTC 2024\n"
      "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->version, "550.54.14");
  EXPECT_EQ(m->flavor, "proprietary");
}

TEST(NvidiaModule, X86OpenModule) {
  auto m = parse_nvidia_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
      "(dvs-builder@U16-I3-C05-2-1)  Fri Mar 14 05:53:08 UTC 2025\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->version, "570.133.20");
  EXPECT_EQ(m->flavor, "open");
}

TEST(NvidiaModule, RejectsWhatIsNotAVersionFile) {
  EXPECT_FALSE(parse_nvidia_version(""));
  EXPECT_FALSE(parse_nvidia_version("GCC version:  gcc version 13.3.0\n"));
  EXPECT_FALSE(parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n"));
  EXPECT_FALSE(parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  5"));
  EXPECT_FALSE(parse_nvidia_version("NVRM version:"));
}

TEST(NvidiaModule, MissingFileMeansNotLoaded) {
  auto m = read_nvidia_module(Root("/nonexistent-sparkdoc-root"));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().why, Why::kAbsent);
  EXPECT_EQ(m.error().message, "nvidia kernel module not loaded");
}

}  // namespace
}  // namespace sparkdoc::sys
