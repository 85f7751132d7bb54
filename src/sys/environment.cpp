#include "sys/environment.h"

#include <array>
#include <cstring>

#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

// The variables a snapshot may carry, and nothing else. Each names the check or seed that reads
// it: the distributed-launch variables and prefixes that make frameworks start multi-process
// runs on a one-GPU Spark (001 "Distributed Training Environment Cleanup"), allocator and
// tokenizer settings (001 runtime variables), the CUDA and Python environment selection (G1),
// and the variables NGC, Apptainer and Singularity images set, which name the image (G9).
constexpr auto kRecordedNames = std::to_array<std::string_view>({
    "WORLD_SIZE",
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
    "SINGULARITY_CONTAINER",
});
constexpr auto kRecordedPrefixes = std::to_array<std::string_view>({
    "NCCL_",
    "OMPI_",
    "MPI_",
    "PMI_",
    "ACCELERATE_USE_",
});

}  // namespace

bool is_recorded_env(std::string_view name) {
  for (std::string_view n : kRecordedNames) {
    if (n == name) return true;
  }
  for (std::string_view p : kRecordedPrefixes) {
    if (name.size() > p.size() && name.starts_with(p)) return true;
  }
  return false;
}

std::map<std::string, std::string> recorded_environment(char** envp) {
  std::map<std::string, std::string> out;
  if (!envp) return out;
  for (char** e = envp; *e; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view name = entry.substr(0, eq);
    if (is_recorded_env(name)) out.emplace(name, valid_utf8(entry.substr(eq + 1)));
  }
  return out;
}

std::map<std::string, std::string> parse_environ(std::string_view nul_separated) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < nul_separated.size()) {
    size_t end = nul_separated.find('\0', start);
    if (end == std::string_view::npos) end = nul_separated.size();
    std::string_view entry = nul_separated.substr(start, end - start);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos && eq != 0) {
      out.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    start = end + 1;
  }
  return out;
}

std::map<std::string, std::string> recorded_only(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    if (is_recorded_env(name)) out.emplace(name, valid_utf8(value));
  }
  return out;
}

std::optional<std::string> find_env(char** envp, std::string_view name) {
  if (!envp) return std::nullopt;
  for (char** e = envp; *e; ++e) {
    std::string_view entry(*e);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

}  // namespace sparkdoc::sys
