// Every sys reading in one call: what the snapshot capture takes from the operating system.
#pragma once

#include <map>
#include <string>

#include "core/fs.h"
#include "core/reading.h"
#include "model/sys.h"

namespace sparkdoc::sys {

struct SysOptions {
  Root root;               // the live machine, or a fixture tree
  std::string config_dir;  // where to look for tensor-parallel configs (G10), a machine path
                           // mapped through root; "" skips the scan
  char** envp = nullptr;   // environ-style array; nullptr: ::environ on the live root, and
                           // <root>/proc/self/environ on a fixture root
  std::string home;        // home directory for accelerate's config; "" = HOME from envp
};

struct SysReadings {
  Host host;
  Reading<MemInfo> meminfo;
  VmTunables vm;
  Reading<Psi> memory_pressure;
  Reading<NvidiaKernelModule> nvidia_module;
  Reading<CgroupInfo> cgroup;
  ContainerMarkers container;
  Limits limits;
  std::map<std::string, std::string> env;  // only is_recorded_env names
  Reading<AccelerateConfig> accelerate_config;
  Reading<ProcessScan> processes;
  Reading<ParallelConfigScan> parallel_configs;
  Reading<KernelLog> kernel_log;
  Reading<KernelBoot> kernel_boot;
  Reading<OsRelease> os_release;
  Reading<PackageList> packages;
  Reading<DockerSetup> docker;
  Reading<ShmScan> shm;
  bool operator==(const SysReadings&) const = default;
};

// Takes every reading; never fails as a whole: each reading records its own absence. Reads
// files and /proc only, no environment changes, no threads; safe to call from any thread.
SysReadings read_all(const SysOptions& options);

}  // namespace sparkdoc::sys
