#include "sys/probe.h"

#include <unistd.h>

#include "sys/accelerate.h"
#include "sys/cgroup.h"
#include "sys/container.h"
#include "sys/docker.h"
#include "sys/environment.h"
#include "sys/host.h"
#include "sys/kernel_log.h"
#include "sys/limits.h"
#include "sys/meminfo.h"
#include "sys/nvidia_module.h"
#include "sys/packages.h"
#include "sys/parallel_config.h"
#include "sys/processes.h"
#include "sys/psi.h"
#include "sys/release.h"
#include "sys/shm.h"
#include "sys/text.h"
#include "sys/vm.h"

namespace sparkdoc::sys {
namespace {

// The whole environment, from the array given, the live process, or the fixture's record.
std::map<std::string, std::string> full_environment(const SysOptions& options) {
  std::map<std::string, std::string> env;
  char** envp = options.envp;
  if (!envp && options.root.live()) envp = ::environ;
  if (envp) {
    for (char** e = envp; *e; ++e) {
      std::string_view entry(*e);
      size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
  }
  if (auto text = read_text(options.root.path("/proc/self/environ"))) return parse_environ(*text);
  return env;
}

std::string lookup(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

SysReadings read_all(const SysOptions& options) {
  const Root& root = options.root;
  SysReadings r;
  r.host = read_host(root);
  r.meminfo = Reading<MemInfo>::from(read_meminfo(root));
  r.vm = read_vm_tunables(root);
  r.memory_pressure = Reading<Psi>::from(read_memory_pressure(root));
  r.nvidia_module = Reading<NvidiaKernelModule>::from(read_nvidia_module(root));
  r.cgroup = Reading<CgroupInfo>::from(read_cgroup(root));
  r.container = read_container_markers(root);
  r.limits = read_limits(root);

  auto env = full_environment(options);
  r.env = recorded_only(env);
  std::string home = options.home.empty() ? lookup(env, "HOME") : options.home;
  std::string accelerate_path =
      accelerate_config_path(lookup(env, "HF_HOME"), lookup(env, "XDG_CACHE_HOME"), home);
  r.accelerate_config =
      Reading<AccelerateConfig>::from(read_accelerate_config(root, accelerate_path));

  r.processes = Reading<ProcessScan>::from(scan_processes(root));
  r.kernel_log = Reading<KernelLog>::from(read_kernel_log(root));
  r.kernel_boot = Reading<KernelBoot>::from(read_kernel_boot(root));
  r.os_release = read_os_release(root);
  r.packages = Reading<PackageList>::from(read_packages(root));
  r.docker = read_docker(root);
  r.shm = Reading<ShmScan>::from(read_shm(root));
  if (options.config_dir.empty()) {
    r.parallel_configs = Reading<ParallelConfigScan>::absent(Why::kAbsent, "no directory to scan");
  } else {
    auto scan = scan_parallel_configs(root.path(options.config_dir));
    if (scan) scan->directory = valid_utf8(options.config_dir);
    r.parallel_configs = Reading<ParallelConfigScan>::from(std::move(scan));
  }
  return r;
}

}  // namespace sparkdoc::sys
