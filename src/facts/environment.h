// The environment variables a snapshot records, and the launch-environment rules of the
// recipes in one place: for the checks that judge them (S1, S3) and for `sparkdoc run`, which
// applies them to the command it starts.
//
// 001 "Distributed Training Environment Cleanup": a one-GPU Spark run must not inherit launch
// state (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, an MPI launcher's rank
// variables), and "All NCCL_* variables", "All OMPI_* and MPI_* variables" go too; PMI_* is the
// same family (Slurm's and MPICH's process-manager interface). NCCL_VERSION is a label that CUDA
// and NGC images set, not a setting: NCCL ignores it, so it stays.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "model/snapshot.h"

namespace sparkdoc::facts {

// The value of a recorded variable; nullptr when unset (or not one sparkdoc records).
const std::string* env_value(const Snapshot& snapshot, std::string_view name);

// Variables that make a framework start a multi-process run by themselves.
inline bool is_launch_state(std::string_view name) {
  constexpr std::array<std::string_view, 6> kNames{
      "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  constexpr std::array<std::string_view, 8> kLauncherNames{"PMI_RANK",
                                                           "PMI_SIZE",
                                                           "PMIX_RANK",
                                                           "MPI_LOCALRANKID",
                                                           "MPI_LOCALNRANKS",
                                                           "MV2_COMM_WORLD_RANK",
                                                           "MV2_COMM_WORLD_SIZE",
                                                           "SLURM_PROCID"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  if (std::find(kLauncherNames.begin(), kLauncherNames.end(), name) != kLauncherNames.end()) {
    return true;
  }
  return name.starts_with("OMPI_COMM_WORLD_");
}

// NCCL_*, OMPI_*, MPI_*, PMI_* settings (tuning that starts nothing by itself), but not the
// NCCL_VERSION label.
inline bool is_distributed_tuning(std::string_view name) {
  constexpr std::array<std::string_view, 4> kPrefixes{"NCCL_", "OMPI_", "MPI_", "PMI_"};
  if (name == "NCCL_VERSION") return false;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

// What `sparkdoc run` removes from a single-node command's environment.
inline bool is_distributed_variable(std::string_view name) {
  return is_launch_state(name) || is_distributed_tuning(name);
}

// 000 §4: "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512" (001 sets
// the first half): segments grow in place near the memory ceiling, and large cached blocks are
// not split below 512 MB.
inline constexpr std::string_view kRecommendedAllocConf =
    "expandable_segments:True,max_split_size_mb:512";
// 001: "export TOKENIZERS_PARALLELISM=false" (the Rust tokenizers' threads do not survive fork).
inline constexpr std::string_view kTokenizersParallelismOff = "false";
// 001: set both to 0 so a cached accelerate config cannot turn on FSDP or DeepSpeed.
inline constexpr std::array<std::string_view, 2> kAccelerateOverrides{"ACCELERATE_USE_FSDP",
                                                                      "ACCELERATE_USE_DEEPSPEED"};

}  // namespace sparkdoc::facts
