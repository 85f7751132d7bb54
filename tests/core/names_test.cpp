#include "core/names.h"

#include <gtest/gtest.h>

namespace sparkdoc {
namespace {

TEST(Pep503Name, RunsOfSeparatorsBecomeOneDash) {
  EXPECT_EQ(pep503_name("torch"), "torch");
  EXPECT_EQ(pep503_name("Flash_Attn"), "flash-attn");
  EXPECT_EQ(pep503_name("nvidia_cuda_runtime_cu12"), "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(pep503_name("nvidia-cublas-cu12"), "nvidia-cublas-cu12");
  EXPECT_EQ(pep503_name("zope.interface"), "zope-interface");
  EXPECT_EQ(pep503_name("unsloth__zoo"), "unsloth-zoo");
  EXPECT_EQ(pep503_name("a-_.b"), "a-b");
  EXPECT_EQ(pep503_name("PyYAML"), "pyyaml");
}

// The two normalisers this one replaced disagreed at the ends: one kept a leading or trailing
// separator as '-', the other dropped it. PEP 503's regex keeps it.
TEST(Pep503Name, SeparatorsAtTheEndsStayAsPep503Has) {
  EXPECT_EQ(pep503_name("_private"), "-private");
  EXPECT_EQ(pep503_name("pkg."), "pkg-");
  EXPECT_EQ(pep503_name(""), "");
}

}  // namespace
}  // namespace sparkdoc
