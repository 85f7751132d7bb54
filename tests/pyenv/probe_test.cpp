#include "pyenv/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/fs.h"
#include "elf/ld_cache.h"
#include "fixture.h"
#include "model/pyenv_json.h"

namespace sparkdoc::pyenv {
namespace {

using ::testing::ElementsAre;
using testing::fixture;
using ::testing::HasSubstr;
using testing::ScratchDir;

const SonameNeed* need(const TorchInfo& torch, const std::string& soname) {
  for (const SonameNeed& n : *torch.cuda_sonames) {
    if (n.soname == soname) return &n;
  }
  return nullptr;
}

std::vector<std::string> keys(const PythonEnv& env) {
  std::vector<std::string> out;
  for (const auto& [key, dist] : env.packages) out.push_back(key);
  return out;
}

// The image's /etc/ld.so.cache as ldconfig writes it: the CUDA toolkit's folder (from
// ld.so.conf.d) and the multiarch folder, where the container runtime mounts the driver. The
// forward-compatibility folder is not in it: NGC's entrypoint puts it on LD_LIBRARY_PATH.
std::vector<elf::LdCacheEntry> ngc_ld_cache() {
  std::vector<elf::LdCacheEntry> cache;
  for (std::string dir : {"/usr/local/cuda/lib64", "/usr/lib/aarch64-linux-gnu"}) {
    auto names = list_dir(fixture("ngc") + dir);
    for (const std::string& name : *names) {
      cache.push_back({elf::kLdCacheAArch64, name, dir + "/" + name, 0});
    }
  }
  return cache;
}

DiscoveryOptions ngc_options() {
  DiscoveryOptions options;
  options.root = Root(fixture("ngc"));
  options.path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  options.ld_library_path =
      "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64";
  options.multiarch = "aarch64-linux-gnu";
  options.ld_cache = ngc_ld_cache();
  options.ld_cache_flags = elf::kLdCacheAArch64;
  return options;
}

TEST(ReadEnvironments, NgcContainer) {
  auto envs = read_environments(ngc_options());
  ASSERT_EQ(envs.size(), 1u);
  const PythonEnv& env = envs[0];
  EXPECT_THAT(keys(env), ElementsAre("flash-attn", "nvidia-cudnn-frontend", "safetensors", "torch",
                                     "transformers", "triton"));
  EXPECT_EQ(env.packages.at("torch").version, "2.9.0a0+145a3a7.nv25.10");
  EXPECT_EQ(env.packages.at("flash-attn").location,
            "/usr/local/lib/python3.12/dist-packages/flash_attn-2.7.4.post1.dist-info");
  EXPECT_TRUE(env.duplicates.empty());

  ASSERT_TRUE(env.torch) << env.torch.reason();
  const TorchInfo& torch = *env.torch;
  EXPECT_EQ(torch.location, "/usr/local/lib/python3.12/dist-packages/torch");
  EXPECT_EQ(torch.version.value_or(""), "2.9.0a0+145a3a7.nv25.10");
  EXPECT_EQ(torch.cuda.value_or(""), "13.0");
  EXPECT_EQ(torch.arch_list.value_or(""), "sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120");

  ASSERT_TRUE(torch.cuda_sonames) << torch.cuda_sonames.reason();
  std::vector<std::string> sonames;
  for (const SonameNeed& n : *torch.cuda_sonames) sonames.push_back(n.soname);
  EXPECT_THAT(sonames,
              ElementsAre("libcublas.so.13", "libcublasLt.so.13", "libcuda.so.1", "libcudart.so.13",
                          "libcudnn.so.9", "libcufft.so.12", "libcurand.so.10", "libcusparse.so.12",
                          "libnccl.so.2", "libnvrtc.so.13"));
  const SonameNeed* cudart = need(torch, "libcudart.so.13");
  EXPECT_THAT(cudart->needed_by, ElementsAre("libc10_cuda.so", "libtorch_cuda.so"));
  EXPECT_EQ(cudart->found, "/usr/local/cuda/lib64/libcudart.so.13");
  EXPECT_EQ(need(torch, "libcudnn.so.9")->found, "/usr/lib/aarch64-linux-gnu/libcudnn.so.9");
  // LD_LIBRARY_PATH names the image's compat folder first, as NGC's entrypoint does.
  EXPECT_EQ(need(torch, "libcuda.so.1")->found, "/usr/local/cuda/compat/lib/libcuda.so.1");
  EXPECT_THAT(need(torch, "libcuda.so.1")->needed_by, ElementsAre("libcaffe2_nvrtc.so"));
}

TEST(ReadEnvironments, DriverFromTheSystemFolderWithoutLdLibraryPath) {
  DiscoveryOptions options = ngc_options();
  options.ld_library_path.clear();
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  EXPECT_EQ(need(*envs[0].torch, "libcuda.so.1")->found, "/usr/lib/aarch64-linux-gnu/libcuda.so.1");
  // Found through the loader's cache, not a guess at folders: without the multiarch default
  // folder the cache still names it; without the cache too, nothing does.
  options.multiarch.clear();
  envs = read_environments(options);
  EXPECT_EQ(need(*envs[0].torch, "libcuda.so.1")->found, "/usr/lib/aarch64-linux-gnu/libcuda.so.1");
  options.ld_cache.emplace();
  envs = read_environments(options);
  EXPECT_FALSE(need(*envs[0].torch, "libcuda.so.1")->found);
  EXPECT_FALSE(need(*envs[0].torch, "libcudart.so.13")->found)
      << "/usr/local/cuda/lib64 is not a folder the loader searches by itself";
}

// The cache holds entries for more than one architecture; only the loader's own count.
TEST(ReadEnvironments, LdCacheEntriesOfAnotherArchitectureAreSkipped) {
  DiscoveryOptions options = ngc_options();
  options.ld_cache_flags = elf::kLdCacheX86_64;
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  EXPECT_FALSE(need(*envs[0].torch, "libcudart.so.13")->found);
  EXPECT_EQ(need(*envs[0].torch, "libcudnn.so.9")->found, "/usr/lib/aarch64-linux-gnu/libcudnn.so.9")
      << "the multiarch default folder still holds it";
}

TEST(ReadEnvironments, SystemSiteVenvShadowsTheImage) {
  DiscoveryOptions options = ngc_options();
  options.virtual_env = "/workspace/venv";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 2u);  // the venv, then python3 on PATH (/usr)
  const PythonEnv& venv = envs[0];
  EXPECT_EQ(venv.packages.at("transformers").version, "4.57.1");
  EXPECT_EQ(venv.packages.at("peft").version, "0.17.1");
  ASSERT_EQ(venv.duplicates.size(), 1u);
  EXPECT_EQ(venv.duplicates[0].name, "transformers");
  EXPECT_EQ(venv.duplicates[0].version, "5.5.3");
  ASSERT_TRUE(venv.torch);
  EXPECT_EQ(venv.torch->location, "/usr/local/lib/python3.12/dist-packages/torch");
  EXPECT_EQ(envs[1].prefix, "/usr");
  EXPECT_EQ(envs[1].packages.at("transformers").version, "5.5.3");
}

TEST(ReadEnvironments, PipVenvWithCuda12Torch) {
  DiscoveryOptions options;
  options.root = Root(fixture("venv-cu12"));
  options.virtual_env = "/home/ml/venv";
  options.path = "/home/ml/venv/bin:/usr/local/bin:/usr/bin:/bin";
  options.multiarch = "x86_64-linux-gnu";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  const PythonEnv& env = envs[0];
  EXPECT_EQ(env.source, "VIRTUAL_ENV");
  EXPECT_EQ(env.packages.at("torch").version, "2.9.1+cu128");
  EXPECT_EQ(env.packages.at("nvidia-cuda-runtime-cu12").version, "12.8.90");
  EXPECT_EQ(env.packages.at("causal-conv1d").version, "1.5.2");
  EXPECT_EQ(env.packages.count("numpy"), 0u);
  ASSERT_TRUE(env.torch);
  const TorchInfo& torch = *env.torch;
  EXPECT_EQ(torch.cuda.value_or(""), "12.8");
  EXPECT_EQ(torch.arch_list.value_or(""), "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
  ASSERT_TRUE(torch.cuda_sonames);
  const std::string nvidia = "/home/ml/venv/lib/python3.12/site-packages/nvidia";
  const SonameNeed* cudart = need(torch, "libcudart.so.12");
  ASSERT_NE(cudart, nullptr);
  EXPECT_THAT(cudart->needed_by,
              ElementsAre("libtorch_cpu.so", "libtorch_cuda.so", "libtorch_global_deps.so"));
  EXPECT_EQ(cudart->found, nvidia + "/cuda_runtime/lib/libcudart.so.12");
  EXPECT_EQ(need(torch, "libcufft.so.11")->found, nvidia + "/cufft/lib/libcufft.so.11");
  EXPECT_EQ(need(torch, "libcupti.so.12")->found, nvidia + "/cuda_cupti/lib/libcupti.so.12");
  EXPECT_FALSE(need(torch, "libcurand.so.10")->found);
  EXPECT_FALSE(need(torch, "libcusparse.so.12")->found);
}

// glibc searches DT_RPATH before LD_LIBRARY_PATH: a CUDA 12.4 toolkit on LD_LIBRARY_PATH
// does not replace the wheel's cudart, but fills the libraries the wheels lack.
TEST(ReadEnvironments, RpathBeatsLdLibraryPath) {
  DiscoveryOptions options;
  options.root = Root(fixture("venv-cu12"));
  options.virtual_env = "/home/ml/venv";
  options.ld_library_path = "/usr/local/cuda-12.4/lib64";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  const TorchInfo& torch = *envs[0].torch;
  EXPECT_EQ(need(torch, "libcudart.so.12")->found,
            "/home/ml/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12");
  EXPECT_EQ(need(torch, "libcurand.so.10")->found, "/usr/local/cuda-12.4/lib64/libcurand.so.10");
}

TEST(ReadEnvironments, CondaCpuTorch) {
  DiscoveryOptions options;
  options.root = Root(fixture("conda-cpu"));
  options.conda_prefix = "/opt/conda/envs/cpu";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  const TorchInfo& torch = *envs[0].torch;
  EXPECT_EQ(torch.version.value_or(""), "2.9.0+cpu");
  ASSERT_FALSE(torch.cuda);
  EXPECT_EQ(torch.cuda.missing().why, Why::kAbsent);
  EXPECT_THAT(torch.cuda.reason(), HasSubstr("CPU build"));
  ASSERT_FALSE(torch.arch_list);
  EXPECT_THAT(torch.arch_list.reason(), HasSubstr("CPU build"));
  ASSERT_TRUE(torch.cuda_sonames);
  EXPECT_TRUE(torch.cuda_sonames->empty());
}

TEST(ReadEnvironments, CpuTorchOverCuda13Leftovers) {
  DiscoveryOptions options;
  options.root = Root(fixture("mixed-cpu-cu13"));
  options.virtual_env = "/opt/venv";
  options.ld_library_path = "/opt/nvshmem/lib";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  const PythonEnv& env = envs[0];
  EXPECT_EQ(env.packages.at("torch").version, "2.9.0+cpu");
  ASSERT_EQ(env.duplicates.size(), 1u);
  EXPECT_EQ(env.duplicates[0].version, "2.9.0+cu130");
  EXPECT_EQ(env.packages.at("nvidia-cuda-runtime").version, "13.0.96");
  EXPECT_EQ(env.packages.at("nvidia-cudnn-cu13").version, "9.13.0.50");
  ASSERT_TRUE(env.torch);
  const TorchInfo& torch = *env.torch;
  EXPECT_FALSE(torch.cuda);
  ASSERT_TRUE(torch.cuda_sonames);
  const std::string nvidia = "/opt/venv/lib/python3.12/site-packages/nvidia";
  const SonameNeed* cudart = need(torch, "libcudart.so.13");
  ASSERT_NE(cudart, nullptr);
  EXPECT_THAT(cudart->needed_by, ElementsAre("libtorch_cuda.so"));
  EXPECT_EQ(cudart->found, nvidia + "/cu13/lib/libcudart.so.13");
  EXPECT_EQ(need(torch, "libcudnn.so.9")->found, nvidia + "/cudnn/lib/libcudnn.so.9");
  EXPECT_FALSE(need(torch, "libnccl.so.2")->found);
  // DT_RUNPATH comes after LD_LIBRARY_PATH.
  EXPECT_EQ(need(torch, "libnvshmem_host.so.3")->found, "/opt/nvshmem/lib/libnvshmem_host.so.3");
}

TEST(ReadEnvironments, ArchListOnlyWhenAsked) {
  DiscoveryOptions options = ngc_options();
  options.scan_arch_list = false;
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  ASSERT_FALSE(envs[0].torch->arch_list);
  EXPECT_EQ(envs[0].torch->arch_list.reason(), "absent: not scanned");
}

TEST(ReadEnvironments, BrokenTorchFolders) {
  ScratchDir dir;
  dir.write("venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.1\n");
  dir.write("venv/lib/python3.12/site-packages/torch/__init__.py", "");
  dir.write("venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", "not an ELF file");
  dir.write("venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so", "\0sm_80 sm_90\0");
  DiscoveryOptions options;
  options.root = Root(dir.path());
  options.virtual_env = "/venv";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  ASSERT_TRUE(envs[0].torch);
  const TorchInfo& torch = *envs[0].torch;
  EXPECT_FALSE(torch.version);
  EXPECT_THAT(torch.version.reason(), HasSubstr("version.py"));
  EXPECT_FALSE(torch.cuda);
  ASSERT_TRUE(torch.cuda_sonames);
  EXPECT_TRUE(torch.cuda_sonames->empty());
}

TEST(ReadEnvironments, NoTorch) {
  ScratchDir dir;
  dir.write("venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.1\n");
  dir.write("venv/lib/python3.12/site-packages/peft-0.17.1.dist-info/METADATA", "");
  dir.write("venv/lib/python3.12/site-packages/torch/lib/leftover.so", "");
  DiscoveryOptions options;
  options.root = Root(dir.path());
  options.virtual_env = "/venv";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].packages.size(), 1u);
  ASSERT_FALSE(envs[0].torch) << "a torch folder without __init__.py is not importable";
  EXPECT_THAT(envs[0].torch.reason(), HasSubstr("no torch package in /venv/lib/python3.12"));
}

TEST(ReadEnvironments, ManyDistributions) {
  ScratchDir dir;
  const std::string site = "venv/lib/python3.12/site-packages/";
  dir.write("venv/pyvenv.cfg", "version = 3.12.1\n");
  for (int i = 0; i < 150; ++i) {
    dir.write(
        site + "package_" + std::to_string(i) + "-1." + std::to_string(i) + ".dist-info/METADATA",
        "Name: package_" + std::to_string(i) + "\n");
  }
  for (int i = 0; i < 20; ++i) {
    dir.write(site + "nvidia_lib" + std::to_string(i) + "_cu13-13.0." + std::to_string(i) +
                  ".dist-info/METADATA",
              "");
  }
  DiscoveryOptions options;
  options.root = Root(dir.path());
  options.virtual_env = "/venv";
  auto envs = read_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].packages.size(), 20u);
  EXPECT_EQ(envs[0].packages.at("nvidia-lib7-cu13").version, "13.0.7");
}

TEST(ReadPython, AbsentWhenNoEnvironment) {
  DiscoveryOptions options;
  options.root = Root(fixture("ngc"));
  auto python = read_python(options);
  ASSERT_FALSE(python);
  EXPECT_EQ(python.missing().why, Why::kAbsent);
  EXPECT_EQ(python.missing().detail,
            "no Python environment found (no VIRTUAL_ENV, CONDA_PREFIX or python3 on PATH)");
}

TEST(ReadPython, JsonRoundTrip) {
  DiscoveryOptions options;
  options.root = Root(fixture("mixed-cpu-cu13"));
  options.virtual_env = "/opt/venv";
  auto python = read_python(options);
  ASSERT_TRUE(python);
  nlohmann::json j = *python;
  EXPECT_TRUE(j[0].contains("duplicates"));
  EXPECT_EQ(j[0]["torch"]["cuda"]["absent"], "absent");
  EXPECT_EQ(j.get<std::vector<PythonEnv>>(), *python);
}

}  // namespace
}  // namespace sparkdoc::pyenv
