#include "pyenv/dist_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fixture.h"

namespace sparkdoc::pyenv {
namespace {

using testing::fixture;
using testing::ScratchDir;

TEST(IsWatched, TableAndNvidiaPrefix) {
  for (const char* name : {"torch",
                           "triton",
                           "transformers",
                           "peft",
                           "trl",
                           "accelerate",
                           "unsloth",
                           "unsloth-zoo",
                           "bitsandbytes",
                           "flash-attn",
                           "xformers",
                           "mamba-ssm",
                           "causal-conv1d",
                           "vllm",
                           "deepspeed",
                           "safetensors",
                           "sglang",
                           "nvidia-cuda-runtime-cu12",
                           "nvidia-cudnn-cu13",
                           "nvidia-nccl-cu12"}) {
    EXPECT_TRUE(is_watched(name)) << name;
  }
  for (const char* name : {"numpy", "nvidia", "torchvision", "flash_attn", "Torch", ""}) {
    EXPECT_FALSE(is_watched(name)) << name;
  }
}

TEST(ParseDistFolder, NamesAndVersions) {
  struct Case {
    const char* folder;
    const char* name;
    const char* version;
  };
  const Case cases[] = {
      {"torch-2.9.0a0+145a3a7.nv25.10.dist-info", "torch", "2.9.0a0+145a3a7.nv25.10"},
      {"torch-2.11.0.dist-info", "torch", "2.11.0"},
      {"nvidia_cuda_runtime_cu12-12.8.90.dist-info", "nvidia_cuda_runtime_cu12", "12.8.90"},
      {"flash_attn-2.7.4.post1.dist-info", "flash_attn", "2.7.4.post1"},
      {"PyGObject-3.42.2.egg-info", "PyGObject", "3.42.2"},
      {"mamba_ssm-2.2.4-py3.12.egg-info", "mamba_ssm", "2.2.4"},
      {"causal_conv1d-1.5.2-py3.12-linux-aarch64.egg-info", "causal_conv1d", "1.5.2"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_dist_folder(c.folder);
    ASSERT_TRUE(parsed) << c.folder;
    EXPECT_EQ(parsed->name, c.name);
    EXPECT_EQ(parsed->version, c.version);
  }
  for (const char* ambiguous :
       {"causal-conv1d-1.5.2.dist-info", "torch.dist-info", "-1.0.dist-info", "torch-.dist-info",
        "torch-dev.dist-info", "xformers.egg-info", "foo-bar-1.0-py3.egg-info", "torch",
        "torch-2.9.0.data", "__editable__.foo-1.0.pth"}) {
    EXPECT_FALSE(parse_dist_folder(ambiguous)) << ambiguous;
  }
}

TEST(ParseMetadata, HeadersOnly) {
  auto parsed = parse_metadata(
      "Metadata-Version: 2.1\r\nName: causal-conv1d\r\nVersion: 1.5.2\r\n\r\n"
      "Version: 9.9.9 in the description does not count\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->name, "causal-conv1d");
  EXPECT_EQ(parsed->version, "1.5.2");
  EXPECT_FALSE(parse_metadata("Name: torch\n\nVersion: 2.0\n"));
  EXPECT_FALSE(parse_metadata(""));
  EXPECT_FALSE(parse_metadata(std::string(100, '\0')));
}

TEST(ScanDistributions, PipVenv) {
  Root root(fixture("venv-cu12"));
  const std::string site = "/home/ml/venv/lib/python3.12/site-packages";
  auto dists = scan_distributions(root, site);
  ASSERT_TRUE(dists) << dists.error().message;
  std::vector<std::string> names;
  for (const Distribution& d : *dists) names.push_back(d.name + " " + d.version);
  EXPECT_THAT(names, ::testing::ElementsAre(
                         "accelerate 1.10.1", "bitsandbytes 0.48.1", "causal-conv1d 1.5.2",
                         "flash-attn 2.8.3", "mamba-ssm 2.2.4", "nvidia-cublas-cu12 12.8.4.1",
                         "nvidia-cuda-runtime-cu12 12.8.90", "nvidia-cudnn-cu12 9.10.2.21",
                         "nvidia-nccl-cu12 2.27.3", "peft 0.17.1", "torch 2.9.1+cu128",
                         "transformers 4.57.1", "triton 3.4.0", "trl 0.23.0", "unsloth 2026.3.4",
                         "unsloth-zoo 2026.3.2"));
  EXPECT_EQ(dists->front().location, site + "/accelerate-1.10.1.dist-info");
}

TEST(ScanDistributions, MissingFolderIsAbsent) {
  auto dists = scan_distributions(Root(fixture("ngc")), "/usr/lib/python3.99/site-packages");
  ASSERT_FALSE(dists);
  EXPECT_EQ(dists.error().why, Why::kAbsent);
}

TEST(ScanDistributions, EggInfoFileAndUnreadableMetadata) {
  ScratchDir dir;
  dir.write("site/xformers.egg-info", "Metadata-Version: 1.1\nName: xformers\nVersion: 0.0.32\n");
  dir.write("site/vllm-0.11.0-rc1.dist-info/RECORD", "");  // ambiguous and no METADATA
  auto dists = scan_distributions(Root(dir.path()), "/site");
  ASSERT_TRUE(dists);
  ASSERT_EQ(dists->size(), 1u);
  EXPECT_EQ((*dists)[0].name, "xformers");
  EXPECT_EQ((*dists)[0].version, "0.0.32");
}

}  // namespace
}  // namespace sparkdoc::pyenv
