// Which sonames are CUDA libraries, and which CUDA major release one implies
// ("libcudart.so.12" -> 12).
// Header-only and pure so that the pyenv probe and the checks share one table without either
// linking the other.
//
// Most toolkit libraries carry the CUDA major in their soname. cuFFT and cuSOLVER count their
// own majors, one behind the toolkit (CUDA 12 ships .so.11, CUDA 13 ships .so.12). Libraries
// versioned independently of the toolkit (cuSPARSE, cuRAND, cuDNN, NCCL, cuSPARSELt, cuFile,
// NVSHMEM) and the driver's libcuda.so.1 say nothing about the toolkit: nullopt.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace sparkdoc {

struct CudaSonameRule {
  std::string_view name;  // between "lib" and ".so"
  int lib_major_offset;   // CUDA major = soname major + offset
};

inline constexpr std::array<CudaSonameRule, 10> kCudaSonameRules{{
    {"cudart", 0},
    {"cublas", 0},
    {"cublasLt", 0},
    {"nvrtc", 0},
    {"nvrtc-builtins", 0},
    {"nvJitLink", 0},
    {"cupti", 0},
    {"cufft", 1},
    {"cusolver", 1},
    {"cusolverMg", 1},
}};

// "libcublasLt.so.13" or "libcublasLt.so.13.1.0.3" -> 13; nullopt when the library does not
// tell the CUDA major or the text is not a "lib<name>.so.<N>" soname.
inline std::optional<int> cuda_major_of_soname(std::string_view soname) {
  if (auto slash = soname.rfind('/'); slash != std::string_view::npos) {
    soname = soname.substr(slash + 1);
  }
  if (!soname.starts_with("lib")) return std::nullopt;
  size_t so = soname.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  std::string_view name = soname.substr(3, so - 3);
  std::string_view rest = soname.substr(so + 4);
  int major = 0;
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 6) {
    major = major * 10 + (rest[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  for (const auto& rule : kCudaSonameRules) {
    if (rule.name == name) return major + rule.lib_major_offset;
  }
  return std::nullopt;
}

// The libraries that count as CUDA for the soname audit, by the name between "lib" and ".so"
// (a prefix where marked: libcudnn_ops, libnvshmem_host).
struct CudaLibrary {
  std::string_view name;
  bool is_prefix;
};
inline constexpr std::array<CudaLibrary, 20> kCudaLibraries{{
    {"cudart", false},         {"cublas", false},     {"cublasLt", false},     {"nvrtc", false},
    {"nvrtc-builtins", false}, {"nvJitLink", false},  {"cupti", false},        {"cufft", false},
    {"cusolver", false},       {"cusolverMg", false}, {"cusparse", false},     {"curand", false},
    {"cudnn", true},           {"nccl", false},       {"cusparseLt", false},   {"cufile", false},
    {"nvshmem", true},         {"nvToolsExt", false}, {"nvtx3interop", false}, {"cuda", false},
}};

// True for the soname of a CUDA toolkit library torch can need (cudart, cublas, cublasLt,
// nvrtc, nvJitLink, cupti, cufft, cusolver, cusparse, curand, cudnn*, nccl, cusparseLt, cufile,
// nvshmem*, nvToolsExt, nvtx3interop) or of the driver (libcuda.so.1).
inline bool is_cuda_soname(std::string_view soname) {
  if (!soname.starts_with("lib")) return false;
  size_t so = soname.find(".so");
  if (so == std::string_view::npos) return false;
  std::string_view after = soname.substr(so + 3);
  if (!after.empty() && after.front() != '.') return false;
  std::string_view name = soname.substr(3, so - 3);
  for (const CudaLibrary& lib : kCudaLibraries) {
    if (lib.is_prefix ? name.starts_with(lib.name) : name == lib.name) return true;
  }
  return false;
}

// The CUDA major a torch.version.cuda string names ("13.0" -> 13); nullopt otherwise.
inline std::optional<int> cuda_major_of_version(std::string_view version) {
  int major = 0;
  size_t i = 0;
  while (i < version.size() && i < 3 && version[i] >= '0' && version[i] <= '9') {
    major = major * 10 + (version[i] - '0');
    ++i;
  }
  if (i == 0 || (i < version.size() && version[i] != '.')) return std::nullopt;
  return major;
}

}  // namespace sparkdoc
