#include "sys/accelerate.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

// What `accelerate config` writes after choosing FSDP on a two-GPU box.
constexpr std::string_view kFsdpYaml =
    "compute_environment: LOCAL_MACHINE\n"
    "debug: false\n"
    "distributed_type: FSDP\n"
    "downcast_bf16: 'no'\n"
    "fsdp_config:\n"
    "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
    "  fsdp_backward_prefetch: BACKWARD_PRE\n"
    "  fsdp_offload_params: false\n"
    "  fsdp_sharding_strategy: FULL_SHARD\n"
    "machine_rank: 0\n"
    "main_training_function: main\n"
    "mixed_precision: bf16\n"
    "num_machines: 1\n"
    "num_processes: 2\n"
    "rdzv_backend: static\n"
    "same_network: true\n"
    "tpu_env: []\n"
    "use_cpu: false\n";

TEST(AccelerateConfig, FsdpYaml) {
  auto c = parse_accelerate_config(kFsdpYaml);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->distributed_type, "FSDP");
  EXPECT_EQ(c->num_processes, 2);
  EXPECT_EQ(c->num_machines, 1);
  EXPECT_TRUE(c->has_fsdp_config);
  EXPECT_FALSE(c->has_deepspeed_config);
  EXPECT_EQ(c->path, "");
}

TEST(AccelerateConfig, DeepSpeedYamlWithQuotesAndComments) {
  auto c = parse_accelerate_config(
      "# written by hand\n"
      "---\n"
      "compute_environment: LOCAL_MACHINE\n"
      "deepspeed_config:\n"
      "  gradient_accumulation_steps: 1\n"
      "  zero3_init_flag: false\n"
      "  zero_stage: 2\n"
      "distributed_type: \"DEEPSPEED\"  # from the wizard\n"
      "fsdp_config: {}\n"
      "num_processes: '1'\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->distributed_type, "DEEPSPEED");
  EXPECT_TRUE(c->has_deepspeed_config);
  EXPECT_FALSE(c->has_fsdp_config);
  EXPECT_EQ(c->num_processes, 1);
  EXPECT_FALSE(c->num_machines);
}

TEST(AccelerateConfig, SingleGpuNoIsQuoted) {
  auto c = parse_accelerate_config(
      "compute_environment: LOCAL_MACHINE\r\ndistributed_type: 'NO'\r\ndeepspeed_config: null\r\n"
      "fsdp_config:\r\nnum_processes: 1\r\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->distributed_type, "NO");
  EXPECT_FALSE(c->has_fsdp_config);  // "fsdp_config:" with nothing below it
  EXPECT_FALSE(c->has_deepspeed_config);
}

TEST(AccelerateConfig, UnindentedListBelowAKey) {
  auto c = parse_accelerate_config("distributed_type: MULTI_GPU\nfsdp_config:\n- a\n- b\n");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->has_fsdp_config);
}

TEST(AccelerateConfig, InlineFlowMapping) {
  auto c = parse_accelerate_config("fsdp_config: {fsdp_sharding_strategy: FULL_SHARD}\n");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->has_fsdp_config);
  EXPECT_EQ(c->distributed_type, "");
}

TEST(AccelerateConfig, JsonFromWriteBasicConfig) {
  auto c = parse_accelerate_config(
      "{\n  \"compute_environment\": \"LOCAL_MACHINE\",\n  \"debug\": false,\n"
      "  \"distributed_type\": \"MULTI_GPU\",\n  \"fsdp_config\": {},\n"
      "  \"deepspeed_config\": {\"zero_stage\": 3},\n"
      "  \"num_machines\": 1,\n  \"num_processes\": 4\n}");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->distributed_type, "MULTI_GPU");
  EXPECT_EQ(c->num_processes, 4);
  EXPECT_EQ(c->num_machines, 1);
  EXPECT_FALSE(c->has_fsdp_config);
  EXPECT_TRUE(c->has_deepspeed_config);
}

TEST(AccelerateConfig, JsonOddTypes) {
  auto c = parse_accelerate_config(
      "{\"distributed_type\": 3, \"num_processes\": 18446744073709551615, \"num_machines\": 1.5}");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->distributed_type, "");
  EXPECT_FALSE(c->num_processes);
  EXPECT_FALSE(c->num_machines);
}

TEST(AccelerateConfig, RejectsGarbage) {
  EXPECT_FALSE(parse_accelerate_config(""));
  EXPECT_FALSE(parse_accelerate_config("# only a comment\n"));
  EXPECT_FALSE(parse_accelerate_config("this is not yaml at all\n"));
  EXPECT_FALSE(parse_accelerate_config("  indented: first\n"));
  EXPECT_FALSE(parse_accelerate_config("{\"distributed_type\": \"FSDP\""));  // truncated JSON
  EXPECT_FALSE(parse_accelerate_config("[1, 2, 3]"));
  EXPECT_FALSE(parse_accelerate_config(std::string_view("\x89PNG\r\n\x1a\n\0\0", 10)));
  EXPECT_FALSE(parse_accelerate_config(": no key\n"));
}

TEST(AccelerateConfig, DeepJsonNestingDoesNotOverflowTheStack) {
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
  deep += "1";
  deep += std::string(50000, '}');
  auto c = parse_accelerate_config(deep);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->distributed_type, "");
  EXPECT_FALSE(parse_accelerate_config(std::string(50000, '{')));
}

TEST(AccelerateConfigPath, FollowsAccelerate) {
  EXPECT_EQ(accelerate_config_path("/data/hf", "/x", "/home/u"),
            "/data/hf/accelerate/default_config.yaml");
  EXPECT_EQ(accelerate_config_path("", "/home/u/.xdg", "/home/u"),
            "/home/u/.xdg/huggingface/accelerate/default_config.yaml");
  EXPECT_EQ(accelerate_config_path("", "", "/home/u"),
            "/home/u/.cache/huggingface/accelerate/default_config.yaml");
  EXPECT_EQ(accelerate_config_path("~/hf", "", "/home/u"),
            "/home/u/hf/accelerate/default_config.yaml");
  EXPECT_EQ(accelerate_config_path("", "", ""), "");
  EXPECT_EQ(accelerate_config_path("~/hf", "", ""), "");
}

TEST(ReadAccelerateConfig, MissingIsAbsent) {
  testing::TempTree tree;
  auto c = read_accelerate_config(Root(tree.path()),
                                  "/root/.cache/huggingface/accelerate/default_config.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().why, Why::kAbsent);
  auto no_home = read_accelerate_config(Root(tree.path()), "");
  ASSERT_FALSE(no_home);
  EXPECT_EQ(no_home.error().why, Why::kAbsent);
}

TEST(ReadAccelerateConfig, YamlPreferredOverJson) {
  testing::TempTree tree;
  const std::string dir = "/home/u/.cache/huggingface/accelerate/";
  tree.write(dir.substr(1) + "default_config.json", "{\"distributed_type\": \"MULTI_GPU\"}");
  auto json = read_accelerate_config(Root(tree.path()), dir + "default_config.yaml");
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_EQ(json->distributed_type, "MULTI_GPU");
  EXPECT_EQ(json->path, dir + "default_config.json");

  tree.write(dir.substr(1) + "default_config.yaml", "distributed_type: FSDP\n");
  auto yaml = read_accelerate_config(Root(tree.path()), dir + "default_config.yaml");
  ASSERT_TRUE(yaml);
  EXPECT_EQ(yaml->distributed_type, "FSDP");
  EXPECT_EQ(yaml->path, dir + "default_config.yaml");
}

TEST(ReadAccelerateConfig, GarbageFileIsAnError) {
  testing::TempTree tree;
  tree.write("cfg/default_config.yaml", "\x01\x02\x03");
  auto c = read_accelerate_config(Root(tree.path()), "/cfg/default_config.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().why, Why::kError);
}

}  // namespace
}  // namespace sparkdoc::sys
