// Helpers shared by the check implementations: looking things up in a Snapshot and phrasing
// readings. Internal to the checks library and pure like the checks themselves (no clock, no
// environment, no files).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

Finding make_finding(std::string_view id, Verdict verdict, std::string detail,
                     std::vector<std::string> details = {});

// Python distributions

// Finds a distribution by any spelling of its name; nullptr when not installed (or not watched).
const pyenv::Distribution* find_dist(const pyenv::PythonEnv& env, std::string_view name);
// The first environment whose torch could be read; nullptr when none has torch.
const pyenv::PythonEnv* first_torch_env(const std::vector<pyenv::PythonEnv>& envs);
// The environment the package checks judge: the torch environment, else the first one.
const pyenv::PythonEnv* judged_env(const std::vector<pyenv::PythonEnv>& envs);
// The native-code audit, when the snapshot has one judged for this platform's GPU (or
// recorded without a target where no GPU was read); nullptr otherwise, with the reason in
// `why` when given.
const audit::NativeAudit* native_audit(const Snapshot& s, const Platform& p,
                                       std::string* why = nullptr);
// An audited package by any spelling of its name; nullptr when it has no native code.
const audit::PackageAudit* audited_package(const audit::NativeAudit& a, std::string_view name);
// "flash_attn 2.7.4: <text>" for each note of `topic` at `severity` in packages other than
// the `except` ones (normalised names).
std::vector<std::string> audit_notes(const audit::NativeAudit& a, std::string_view topic,
                                     std::string_view severity,
                                     const std::vector<std::string_view>& except = {});

// "/opt/venv (VIRTUAL_ENV)".
std::string describe_env(const pyenv::PythonEnv& env);
// torch's version: torch/version.py first, the dist-info record second; nullopt if neither.
std::optional<std::string> torch_version(const pyenv::PythonEnv& env);

// Environment variables (only those the snapshot records)

const std::string* env_value(const Snapshot& snapshot, std::string_view name);

// Containers (G9's rule; also used by G2 and S5)

struct ContainerVerdict {
  bool inside = false;
  bool strong = false;  // a marker file, PID 1's container= or a mount proves it
  std::string kind;     // "docker", "podman", "apptainer", "kubernetes", ...
  std::vector<std::string> evidence;
  std::optional<std::string> ngc_image;  // "NGC PyTorch 25.10"
  bool ngc_pytorch = false;              // an NGC PyTorch image (NVIDIA_PYTORCH_VERSION): it
                                         // ships its own torch build and flash-attn
};
ContainerVerdict detect_container(const Snapshot& snapshot);

// Nodes in the planned run (G10's rule; also used by S1 and S2)

struct NodeCount {
  int64_t nodes = 1;
  std::vector<std::string> evidence;  // "SLURM_NNODES=2", "--nnodes 2 in the command"
};
NodeCount count_nodes(const Snapshot& snapshot, const Workload& workload);

// Command lines

// Splits a command line into words at spaces, tabs, quotes, commas and parentheses, so that
// `python -c "LLM(tensor_parallel_size=2)"` yields "tensor_parallel_size=2".
std::vector<std::string> command_words(std::string_view command);
// The value of an option in a command line: "--flag V" or "--flag=V". Flags are compared with
// '_' and '-' treated alike.
std::optional<std::string> option_value(std::string_view command,
                                        const std::vector<std::string_view>& flags);

// GPU processes

// A name for a PID: the comm of the process holding /dev/nvidia*, else a known server's kind.
std::optional<std::string> process_name(const Snapshot& snapshot, uint32_t pid);

struct GpuProcessUse {
  uint32_t pid = 0;
  unsigned device = 0;
  std::string name;                    // "" when unknown
  std::optional<uint64_t> used_bytes;  // none when NVML could not say
};
// Every process NVML lists, on every device, with names; empty when NVML was not read.
std::vector<GpuProcessUse> gpu_processes(const Snapshot& snapshot);
// "pid 4242 (vllm) 98.1 GB".
std::string describe_process(const GpuProcessUse& p);

// Readings to text

// Nanoseconds as the largest fitting unit: "3.0 h", "12.5 min", "1.2 s", "0.4 ms".
std::string format_duration_ns(uint64_t ns);
// Milliwatts as watts with one decimal: "11.2 W".
std::string format_watts(uint64_t mw);

}  // namespace sparkdoc::checks
