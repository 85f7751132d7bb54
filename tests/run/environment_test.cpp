#include "run/environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparkdoc::run {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

EnvPlan plan(std::vector<std::string> entries, bool distributed = false) {
  std::vector<char*> envp;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  return plan_environment(envp.data(), distributed);
}

TEST(Environment, RemovesSeed001sVariablesAndAddsTheDefaults) {
  EnvPlan p = plan({"PATH=/usr/bin", "WORLD_SIZE=2", "RANK=1", "LOCAL_RANK=0",
                    "MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500", "NCCL_DEBUG=INFO",
                    "NCCL_SOCKET_IFNAME=eth0", "OMPI_COMM_WORLD_RANK=0", "OMPI_MCA_btl=self",
                    "MPI_LOCALRANKID=0", "PMI_RANK=0", "HOME=/root"});
  EXPECT_THAT(p.removed, ElementsAre("LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "MPI_LOCALRANKID",
                                     "NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "OMPI_COMM_WORLD_RANK",
                                     "OMPI_MCA_btl", "PMI_RANK", "RANK", "WORLD_SIZE"));
  EXPECT_THAT(p.entries,
              ElementsAre("PATH=/usr/bin", "HOME=/root", "ACCELERATE_USE_DEEPSPEED=0",
                          "ACCELERATE_USE_FSDP=0",
                          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
                          "TOKENIZERS_PARALLELISM=false"));
  EXPECT_EQ(p.set.size(), 4u);
  EXPECT_THAT(p.kept, IsEmpty());
}

TEST(Environment, TheUsersOwnDefaultsStayButAccelerateIsForcedOff) {
  EnvPlan p = plan({"PYTORCH_ALLOC_CONF=expandable_segments:True", "TOKENIZERS_PARALLELISM=true",
                    "ACCELERATE_USE_FSDP=1"});
  EXPECT_THAT(p.kept, ElementsAre("PYTORCH_CUDA_ALLOC_CONF", "TOKENIZERS_PARALLELISM"));
  EXPECT_THAT(p.entries, Contains("ACCELERATE_USE_FSDP=0"));
  EXPECT_THAT(p.entries, Not(Contains("ACCELERATE_USE_FSDP=1")));
  EXPECT_THAT(p.entries, Contains("TOKENIZERS_PARALLELISM=true"));
  EXPECT_THAT(p.entries, Not(Contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
                                      "max_split_size_mb:512")));
  EXPECT_EQ(p.set.at("ACCELERATE_USE_FSDP"), "0");
}

TEST(Environment, DistributedKeepsEverythingAndAccelerate) {
  EnvPlan p = plan({"WORLD_SIZE=2", "NCCL_DEBUG=INFO", "ACCELERATE_USE_FSDP=1"}, true);
  EXPECT_THAT(p.removed, IsEmpty());
  EXPECT_THAT(p.entries, Contains("WORLD_SIZE=2"));
  EXPECT_THAT(p.entries, Contains("ACCELERATE_USE_FSDP=1"));
  EXPECT_EQ(p.set.count("ACCELERATE_USE_DEEPSPEED"), 0u);
  EXPECT_EQ(p.set.count("TOKENIZERS_PARALLELISM"), 1u);
}

TEST(Environment, TheNcclVersionLabelStaysAndOddEntriesGo) {
  EnvPlan p = plan({"NCCL_VERSION=2.27.7", "=bad", "NOEQUALS", "A=1", "A=2"});
  EXPECT_THAT(p.removed, IsEmpty());
  EXPECT_THAT(p.entries, Contains("NCCL_VERSION=2.27.7"));
  EXPECT_THAT(p.entries, Contains("A=1"));
  EXPECT_THAT(p.entries, Not(Contains("A=2")));
  EXPECT_THAT(p.entries, Not(Contains("NOEQUALS")));
}

TEST(Environment, NoEnvironmentAtAll) {
  EnvPlan p = plan_environment(nullptr, false);
  EXPECT_EQ(p.entries.size(), 4u);
}

}  // namespace
}  // namespace sparkdoc::run
