#include "pyenv/torch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/cuda_sonames.h"
#include "fixture.h"

namespace sparkdoc::pyenv {
namespace {

using namespace std::string_literals;
using testing::fixture;
using testing::ScratchDir;

TEST(TorchVersionPy, CurrentForm) {
  auto v = parse_torch_version_py(
      "from typing import Optional\n\n"
      "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
      "__version__ = '2.11.0+cu130'\n"
      "debug = False\n"
      "cuda: Optional[str] = '13.0'\n"
      "git_version = '70d99e99'\n"
      "hip: Optional[str] = None\n");
  EXPECT_EQ(v.version, "2.11.0+cu130");
  EXPECT_TRUE(v.has_cuda_line);
  EXPECT_EQ(v.cuda, "13.0");
  EXPECT_FALSE(v.hip);
}

TEST(TorchVersionPy, OlderAndCpuAndRocmForms) {
  auto old = parse_torch_version_py("__version__ = \"2.1.0+cu121\"\ncuda = '12.1'\n");
  EXPECT_EQ(old.version, "2.1.0+cu121");
  EXPECT_EQ(old.cuda, "12.1");

  auto cpu = parse_torch_version_py("__version__ = '2.9.0+cpu'\ncuda = None\n");
  EXPECT_TRUE(cpu.has_cuda_line);
  EXPECT_FALSE(cpu.cuda);

  auto rocm = parse_torch_version_py(
      "__version__ = '2.9.0+rocm6.4'\ncuda: Optional[str] = None\nhip: Optional[str] = "
      "'6.4.43482'\n");
  EXPECT_FALSE(rocm.cuda);
  EXPECT_EQ(rocm.hip, "6.4.43482");

  auto none = parse_torch_version_py("if cuda == '12.1':\n    pass\n# cuda = '11.8'\n");
  EXPECT_FALSE(none.version);
  EXPECT_FALSE(none.has_cuda_line);
}

TEST(FindArchList, PicksTheLongestTerminatedRun) {
  std::string bytes = "\0sm_80 sm_90\0garbage sm_75\0sm_75 sm_80 sm_86 sm_90 sm_100 sm_120\0"s;
  EXPECT_EQ(find_arch_list(bytes), "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120");
}

TEST(FindArchList, SuffixesAndPtxTokens) {
  EXPECT_EQ(find_arch_list("x\0sm_90a sm_100a sm_120f sm_121a\0"s),
            "sm_90a sm_100a sm_120f sm_121a");
  EXPECT_EQ(find_arch_list("\0sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120\0"s),
            "sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120");
  EXPECT_EQ(find_arch_list("sm_80 sm_90\0"s), "sm_80 sm_90")
      << "the start of the bytes bounds a run";
}

TEST(FindArchList, RejectsWhatIsNotAList) {
  EXPECT_FALSE(find_arch_list("\0sm_90\0"s)) << "one token";
  EXPECT_FALSE(find_arch_list("\0sm_80 sm_90"s)) << "not NUL-terminated";
  EXPECT_FALSE(find_arch_list("\0xsm_80 sm_90\0"s)) << "inside a longer word";
  EXPECT_FALSE(find_arch_list("\0sm_80 sm_90 \0"s)) << "trailing space";
  EXPECT_FALSE(find_arch_list("built for: sm_80 sm_90\0"s)) << "the tail of a sentence";
  EXPECT_FALSE(find_arch_list("\0sm_80 sm_90x1\0"s));
  EXPECT_FALSE(find_arch_list("\0compute_80 compute_90\0"s)) << "starts with sm_";
  EXPECT_FALSE(find_arch_list("\0sm_ sm_\0"s));
  std::string endless = "\0"s;
  for (int i = 0; i < 200; ++i) endless += "sm_90 ";
  endless += "sm_90\0"s;
  EXPECT_FALSE(find_arch_list(endless)) << "longer than any real list";
  EXPECT_FALSE(find_arch_list(""));
  EXPECT_FALSE(find_arch_list("sm_"));
}

TEST(ScanArchListFile, FixtureLibraries) {
  auto ngc = scan_arch_list_file(
      fixture("ngc") + "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_python.so");
  ASSERT_TRUE(ngc) << ngc.error().message;
  EXPECT_EQ(*ngc, "sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120");
  auto cpu = scan_arch_list_file(
      fixture("conda-cpu") +
      "/opt/conda/envs/cpu/lib/python3.11/site-packages/torch/lib/libtorch_python.so");
  ASSERT_TRUE(cpu) << cpu.error().message;
  EXPECT_FALSE(*cpu);
  auto missing = scan_arch_list_file(fixture("ngc") + "/nonexistent.so");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);
}

// A file that is not ELF is scanned whole, in chunks; a list straddling the end of the first
// read (1 MiB and the 1 KiB overlap) is still found whole.
TEST(ScanArchListFile, NonElfFileAcrossChunkBoundary) {
  ScratchDir dir;
  const std::string list = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120";
  std::string bytes(1024 * 1024 + 1024 - 10, 'x');
  bytes += '\0' + list + '\0' + std::string(1000, 'y') + "\0sm_80 sm_90\0"s;
  dir.write("lib.bin", bytes);
  auto found = scan_arch_list_file(dir.path() + "/lib.bin");
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, list);
}

TEST(ScanArchListFile, LargeFileWithoutSectionHeadersIsNotScanned) {
  ScratchDir dir;
  dir.write("huge.so",
            "\x7f"
            "ELF");
  std::filesystem::resize_file(dir.path() + "/huge.so", 65u << 20);  // sparse: nothing written
  auto found = scan_arch_list_file(dir.path() + "/huge.so");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().why, Why::kNotSupported);
}

TEST(CudaSonames, WhatCountsAsCuda) {
  for (const char* soname : {"libcudart.so.13",
                             "libcublas.so.12",
                             "libcublasLt.so.13",
                             "libnvrtc.so.13",
                             "libnvrtc-builtins.so.13.0",
                             "libnvJitLink.so.13",
                             "libcupti.so.12",
                             "libcufft.so.11",
                             "libcusolver.so.12",
                             "libcusparse.so.12",
                             "libcurand.so.10",
                             "libcudnn.so.9",
                             "libcudnn_ops.so.9",
                             "libnccl.so.2",
                             "libcusparseLt.so.0",
                             "libcufile.so.0",
                             "libnvshmem_host.so.3",
                             "libnvToolsExt.so.1",
                             "libnvtx3interop.so.1",
                             "libcuda.so.1",
                             "libcudart.so"}) {
    EXPECT_TRUE(is_cuda_soname(soname)) << soname;
  }
  for (const char* soname :
       {"libc10_cuda.so", "libtorch_cuda.so", "libc.so.6", "libcudart", "cudart.so.12",
        "libcudartx.so.12", "libcudart.som", "libgomp.so.1", "libcuda_stub.so", ""}) {
    EXPECT_FALSE(is_cuda_soname(soname)) << soname;
  }
}

// Reference §3.2: cuFFT and cuSOLVER count one behind the toolkit; cuSPARSE, cuRAND, cuDNN,
// NCCL, cuSPARSELt, cuFile, NVSHMEM and the driver do not tell.
TEST(CudaSonames, MajorTable) {
  struct Case {
    const char* soname;
    int cuda_major;
  };
  const Case cases[] = {
      {"libcudart.so.12", 12},
      {"libcudart.so.13", 13},
      {"libcublas.so.12", 12},
      {"libcublas.so.13", 13},
      {"libcublasLt.so.12", 12},
      {"libcublasLt.so.13", 13},
      {"libnvrtc.so.12", 12},
      {"libnvrtc.so.13", 13},
      {"libnvJitLink.so.12", 12},
      {"libnvJitLink.so.13", 13},
      {"libcupti.so.12", 12},
      {"libcupti.so.13", 13},
      {"libcufft.so.11", 12},
      {"libcufft.so.12", 13},
      {"libcusolver.so.11", 12},
      {"libcusolver.so.12", 13},
      {"libcusparse.so.12", 0},
      {"libcurand.so.10", 0},
      {"libcudnn.so.9", 0},
      {"libnccl.so.2", 0},
      {"libcusparseLt.so.0", 0},
      {"libcufile.so.0", 0},
      {"libnvshmem_host.so.3", 0},
      {"libcuda.so.1", 0},
      {"libcudart.so.13.0.96", 13},
      {"libc.so.6", 0},
      {"garbage", 0},
  };
  for (const Case& c : cases) EXPECT_EQ(cuda_major_of_soname(c.soname), c.cuda_major) << c.soname;
}

}  // namespace
}  // namespace sparkdoc::pyenv
