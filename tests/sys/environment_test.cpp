#include "sys/environment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparkdoc::sys {
namespace {

using namespace std::string_literals;

TEST(RecordedEnv, NamesFromTheSeeds) {
  for (const char* name : {"WORLD_SIZE",
                           "RANK",
                           "LOCAL_RANK",
                           "LOCAL_WORLD_SIZE",
                           "GROUP_WORLD_SIZE",
                           "NODE_RANK",
                           "NNODES",
                           "MASTER_ADDR",
                           "MASTER_PORT",
                           "SLURM_NNODES",
                           "SLURM_JOB_NUM_NODES",
                           "PYTORCH_CUDA_ALLOC_CONF",
                           "PYTORCH_ALLOC_CONF",
                           "TOKENIZERS_PARALLELISM",
                           "CUDA_VISIBLE_DEVICES",
                           "NVIDIA_VISIBLE_DEVICES",
                           "LD_LIBRARY_PATH",
                           "VIRTUAL_ENV",
                           "CONDA_PREFIX",
                           "CONDA_DEFAULT_ENV",
                           "HF_HOME",
                           "TRITON_PTXAS_PATH",
                           "TORCH_CUDA_ARCH_LIST",
                           "NVIDIA_PYTORCH_VERSION",
                           "NVIDIA_PRODUCT_NAME",
                           "NVIDIA_BUILD_ID",
                           "PYTORCH_VERSION",
                           "PYTORCH_BUILD_VERSION",
                           "CUDA_VERSION",
                           "CUDA_DRIVER_VERSION",
                           "NVIDIA_VLLM_VERSION",
                           "APPTAINER_CONTAINER",
                           "SINGULARITY_CONTAINER"}) {
    EXPECT_TRUE(is_recorded_env(name)) << name;
  }
  for (const char* name :
       {"NCCL_DEBUG", "NCCL_P2P_DISABLE", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID", "PMI_RANK",
        "ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED"}) {
    EXPECT_TRUE(is_recorded_env(name)) << name;
  }
}

TEST(RecordedEnv, SecretsAndOthersStayHome) {
  for (const char* name :
       {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "HOME",
        "PATH", "USER", "SSH_AUTH_SOCK", "XDG_CACHE_HOME", "ACCELERATE_CONFIG_FILE", "NCCL",
        "NCCL_", "RANKS", "world_size", "", "OMPI", "MPICH_GPU_SUPPORT_ENABLED"}) {
    EXPECT_FALSE(is_recorded_env(name)) << name;
  }
}

TEST(RecordedEnv, FiltersAnEnvironArray) {
  std::vector<std::string> storage = {"HF_TOKEN=hf_secret",
                                      "WORLD_SIZE=2",
                                      "NCCL_DEBUG=INFO",
                                      "MASTER_ADDR=",
                                      "=oops",
                                      "NOEQUALS",
                                      "WORLD_SIZE=3",
                                      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"};
  std::vector<char*> envp;
  for (auto& s : storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  auto env = recorded_environment(envp.data());
  std::map<std::string, std::string> want = {
      {"WORLD_SIZE", "2"},  // the first of two wins, as getenv() sees it
      {"NCCL_DEBUG", "INFO"},
      {"MASTER_ADDR", ""},
      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
  EXPECT_EQ(env, want);
  EXPECT_TRUE(recorded_environment(nullptr).empty());
  EXPECT_EQ(find_env(envp.data(), "HF_TOKEN"), "hf_secret");
  EXPECT_EQ(find_env(envp.data(), "WORLD"), std::nullopt);
  EXPECT_EQ(find_env(nullptr, "HOME"), std::nullopt);
}

TEST(ParseEnviron, ProcEnvironText) {
  auto env = parse_environ("PATH=/usr/bin\0container=podman\0TERM=xterm\0HOME=/root\0"s);
  EXPECT_EQ(env.size(), 4u);
  EXPECT_EQ(env["container"], "podman");
  EXPECT_EQ(env["HOME"], "/root");
}

TEST(ParseEnviron, OddEntries) {
  auto env = parse_environ("A=1\0\0=x\0B\0C==2\0A=3\0D=unterminated"s);
  std::map<std::string, std::string> want = {{"A", "1"}, {"C", "=2"}, {"D", "unterminated"}};
  EXPECT_EQ(env, want);
  EXPECT_TRUE(parse_environ("").empty());
  EXPECT_TRUE(parse_environ("\0\0\0"s).empty());
}

TEST(ParseEnviron, RecordedOnly) {
  auto env = recorded_only(parse_environ("HF_TOKEN=x\0NCCL_IB_DISABLE=1\0"s));
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env.begin()->first, "NCCL_IB_DISABLE");
}

}  // namespace
}  // namespace sparkdoc::sys
