// The Snapshot: every reading sparkdoc takes of a machine, in one value. It is the contract
// between probes and checks: `sparkdoc check --snapshot FILE` judges a recorded machine
// exactly as the live one. Serialised as one JSON document with schema_version.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "audit/readings.h"
#include "core/reading.h"
#include "gpu/readings.h"
#include "pyenv/readings.h"
#include "sys/readings.h"

namespace sparkdoc {

inline constexpr int kSnapshotSchemaVersion = 1;

// A bandwidth measurement saved into the snapshot (G5); absent until `sparkdoc bw` runs.
struct BandwidthMeasurement {
  double device_copy_gbps = 0;  // read + write bytes counted
  std::string method;
  std::string taken_at;
  bool operator==(const BandwidthMeasurement&) const = default;
};

struct Snapshot {
  int schema_version = kSnapshotSchemaVersion;
  std::string sparkdoc_version;
  std::string taken_at;  // UTC, ISO 8601; reports take time from here, never from the clock

  sys::Host host;
  Reading<sys::MemInfo> meminfo;
  sys::VmTunables vm;
  Reading<sys::Psi> memory_pressure;
  Reading<sys::NvidiaKernelModule> nvidia_module;
  Reading<sys::CgroupInfo> cgroup;
  sys::ContainerMarkers container;
  sys::Limits limits;
  // Only the variables the checks judge (sys::is_recorded_env); nothing else leaves the machine.
  std::map<std::string, std::string> env;
  Reading<sys::AccelerateConfig> accelerate_config;
  Reading<sys::ProcessScan> processes;
  Reading<sys::ParallelConfigScan> parallel_configs;

  gpu::GpuReadings gpu;

  Reading<std::vector<pyenv::PythonEnv>> python;

  Reading<BandwidthMeasurement> bandwidth;

  // The native-code audit of the environment torch lives in (else the first), judged for the
  // first GPU's compute capability: what G1, G2 and G7 name packages and sonames from.
  Reading<audit::NativeAudit> native_code;

  // How long each probe took on a live capture, milliseconds ("nvml", "cuda", "sys",
  // "python", "total"); empty in written fixtures. For "why is check slow" reports.
  std::map<std::string, double> timings_ms;

  bool operator==(const Snapshot&) const = default;
};

// The planned work a check judges the machine against; from the command line.
struct Workload {
  std::optional<uint64_t> need_bytes;  // --need: memory the run needs
  std::optional<std::string> playbook; // --playbook NAME (G8)
  std::optional<std::string> command;  // --cmd "torchrun ..." (G10)
  bool operator==(const Workload&) const = default;
};

}  // namespace sparkdoc
