// Snapshots built in code for the check tests: a healthy, idle DGX Spark inside an NGC
// container and an H200 bare-metal host. Each test changes one field and asserts the verdict.
#pragma once

#include <string>
#include <string_view>

#include "checks/registry.h"
#include "model/snapshot.h"

namespace sparkdoc::checks::testing {

// GB10: MemTotal 127,600,748 kB, MemAvailable 118,566,368 kB, NVML "NVIDIA GB10" CC 12.1 with
// memory NOT_SUPPORTED, 45 C, 11 W, driver 580.95.05, CUDA 13000, CUDA integrated, aarch64, NGC
// PyTorch 25.10 with /.dockerenv, torch 2.9.0a0+145a3a7.nv25.10 (CUDA 13.0) whose CUDA
// libraries all resolve.
Snapshot gb10_snapshot();
// H200: CC 9.0, 143771 MiB, x86_64, bare host with a venv holding torch 2.11.0+cu130.
Snapshot h200_snapshot();

// The network of a Spark cabled to a second one over QSFP port 0, set up as the field reports
// say it should be: both halves (rocep1s0f0, roceP2p1s0f0) up at 200 Gb/s with MTU 9000, port 1
// unused (Down, rate 40), ConnectX-7 firmware 28.45.4028, RoCE v2 GIDs at index 3, no
// nccl.conf, RemoveIPC=no in a drop-in, user "spark" with a session, no hot-plug flag.
net::NetReadings paired_spark_network();

// Shortcuts into the one snapshot field most tests change.
gpu::Device& nvml_device(Snapshot& s, size_t index = 0);
pyenv::PythonEnv& python_env(Snapshot& s, size_t index = 0);
pyenv::TorchInfo& torch_info(Snapshot& s, size_t index = 0);
sys::MemInfo& meminfo(Snapshot& s);
void set_dist(Snapshot& s, std::string_view name, std::string version);

// A workload whose command line is `command`.
Workload with_command(std::string command);

// Runs one check from the table on the snapshot's classified platform.
Finding run_one(std::string_view id, const Snapshot& s, const Workload& w = {});

}  // namespace sparkdoc::checks::testing
