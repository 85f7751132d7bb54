#include "facts/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sparkdoc::facts {
namespace {

using ::testing::ElementsAre;

TEST(CommandLine, OptionValue) {
  EXPECT_EQ(option_value("vllm serve m --gpu-memory-utilization 0.4", {"--gpu-memory-utilization"}),
            "0.4");
  EXPECT_EQ(option_value("vllm serve m --gpu_memory_utilization=0.4", {"--gpu-memory-utilization"}),
            "0.4");
  EXPECT_EQ(option_value("vllm serve m", {"--gpu-memory-utilization"}), std::nullopt);
  EXPECT_EQ(option_value("x --flag", {"--flag"}), std::nullopt);
}

TEST(CommandLine, CommandWordsSplitPythonCalls) {
  EXPECT_THAT(command_words("python -c \"LLM(m, tensor_parallel_size=2)\""),
              ElementsAre("python", "-c", "LLM", "m", "tensor_parallel_size=2"));
}

}  // namespace
}  // namespace sparkdoc::facts
