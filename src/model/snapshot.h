// The Snapshot: every reading sparkdoc takes of a machine, in one value. It is the contract
// between probes and checks: `sparkdoc check --snapshot FILE` judges a recorded machine
// exactly as the live one. Serialised as one JSON document with schema_version.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"
#include "model/gpu.h"
#include "model/native.h"
#include "model/net.h"
#include "model/pyenv.h"
#include "model/sys.h"

namespace sparkdoc {

// 2: native_code holds the audit's facts per file (model/native.h) instead of verdicts for one
// GPU. A schema 1 snapshot still reads; its native_code reads as absent, with the reason.
inline constexpr int kSnapshotSchemaVersion = 2;

// One kind of transfer timed several times (`sparkdoc bw`). GB/s are 1e9 bytes per second of
// the bytes counted per timed run, which the owning field names (read + write for a copy).
struct TransferRate {
  double best_gbps = 0;
  double median_gbps = 0;
  uint64_t bytes_per_run = 0;  // bytes counted in one timed run
  int runs = 0;                // timed runs, after the warm-up
  bool operator==(const TransferRate&) const = default;
};

// Host memory bandwidth with every thread on its own CPU (`sparkdoc bw`).
struct HostBandwidth {
  unsigned threads = 0;
  bool pinned = false;        // each thread was bound to one CPU
  uint64_t buffer_bytes = 0;  // each of the two buffers, split between the threads
  TransferRate read;          // bytes read
  TransferRate write;         // bytes written
  TransferRate copy;          // bytes read + bytes written (2 x buffer per run)
  bool operator==(const HostBandwidth&) const = default;
};

// A bandwidth measurement saved into the snapshot (G5); absent until `sparkdoc bw` runs, or
// absent with the reason when the device copy could not be measured. JSON keys are append
// only; a snapshot written before a key existed reads it as its default.
struct BandwidthMeasurement {
  double device_copy_gbps = 0;  // median of the timed device copies; read + write bytes counted
  std::string method;
  std::string taken_at;
  double device_copy_best_gbps = 0;  // the fastest timed copy; read + write bytes counted
  std::string device_name;
  int device_ordinal = 0;
  uint64_t buffer_bytes = 0;           // each of the two device buffers
  std::optional<double> nominal_gbps;  // the device's nominal memory bandwidth, when known
  std::string nominal_source;          // "NVIDIA H200: HBM3e, 4.8 TB/s"
  Reading<TransferRate> h2d;           // pinned host -> device; bytes moved once
  Reading<TransferRate> d2h;           // device -> pinned host; bytes moved once
  Reading<HostBandwidth> host;
  bool operator==(const BandwidthMeasurement&) const = default;
};

// The reason a reading added after a snapshot was written reads as absent: a check then says
// SKIP with it rather than judge a default.
template <class T>
Reading<T> not_recorded() {
  return Reading<T>::absent(Why::kAbsent,
                            "not recorded in this snapshot (taken by a sparkdoc that did not read "
                            "it); take the snapshot again");
}

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

  // The native-code audit of the environment torch lives in (else the first): facts per shared
  // object, which G1, G2, G7 and S9 judge for the GPU (or --arch).
  Reading<audit::NativeAudit> native_code;

  // How long each probe took on a live capture, milliseconds ("nvml", "cuda", "sys",
  // "python", "total"); empty in written fixtures. For "why is check slow" reports.
  std::map<std::string, double> timings_ms;

  // The readings of the F checks; "not recorded" in snapshots written before them.
  Reading<sys::KernelLog> kernel_log = not_recorded<sys::KernelLog>();
  Reading<sys::KernelBoot> kernel_boot = not_recorded<sys::KernelBoot>();
  Reading<sys::OsRelease> os_release = not_recorded<sys::OsRelease>();
  Reading<sys::PackageList> packages = not_recorded<sys::PackageList>();
  Reading<sys::DockerSetup> docker = not_recorded<sys::DockerSetup>();
  Reading<sys::ShmScan> shm = not_recorded<sys::ShmScan>();

  // The network a multi-node job runs over (the N checks, `sparkdoc compare`).
  Reading<net::NetReadings> network = not_recorded<net::NetReadings>();

  bool operator==(const Snapshot&) const = default;
};

// The planned work a check judges the machine against; from the command line.
struct Workload {
  std::optional<uint64_t> need_bytes;   // --need: memory the run needs
  std::optional<std::string> playbook;  // --playbook NAME (G8)
  std::optional<std::string> command;   // --cmd "torchrun ..." (G10)
  // --arch: judge native code for this compute capability instead of the snapshot's GPU.
  std::optional<gpu::ComputeCapability> arch;
  bool operator==(const Workload&) const = default;
};

}  // namespace sparkdoc
