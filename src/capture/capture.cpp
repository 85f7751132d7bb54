#include "capture/capture.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <optional>
#include <system_error>

#include "core/cache_dir.h"
#include "core/time.h"
#include "core/version.h"
#include "elf/ld_cache.h"
#include "gpu/probe.h"
#include "net/probe.h"
#include "pyenv/probe.h"
#include "sys/environment.h"
#include "sys/probe.h"

extern char** environ;

namespace sparkdoc {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Runs `work` on its own thread when one can be had, else on this one when the result is
// asked for. The probes share no state, so they may run at once.
template <class T>
class Task {
 public:
  explicit Task(std::function<T()> work) : work_(std::move(work)) {
    try {
      future_ = std::async(std::launch::async, [this] { return timed(); });
    } catch (const std::system_error&) {
      // No thread: run in get().
    }
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  T get() { return future_.valid() ? future_.get() : timed(); }
  double elapsed_ms() const { return elapsed_ms_; }

 private:
  T timed() {
    auto start = Clock::now();
    T out = work_();
    elapsed_ms_ = ms_since(start);
    return out;
  }
  std::function<T()> work_;
  std::future<T> future_;
  double elapsed_ms_ = 0;
};

// native_audit_options with the loader's cache already read.
Result<audit::AuditOptions> audit_options_with(const Snapshot& s, const CaptureOptions& options,
                                               std::vector<elf::LdCacheEntry> ld_cache);

Reading<gpu::NvmlReadings> nvml_not_read(const std::string& why) {
  return Reading<gpu::NvmlReadings>::absent(Why::kAbsent, why);
}

// The GPU's readings and how long each took.
struct GpuRead {
  Reading<gpu::NvmlReadings> nvml;
  Reading<gpu::CudaReadings> cuda;
  double nvml_ms = 0;
  double cuda_ms = 0;
};

// NVML, then the CUDA driver: its devices only when NVML listed none, unless `cuda_devices`
// (then both at once: each initialisation takes its own 0.2 s on an H200, and the driver
// serialises them only in part).
GpuRead read_gpu_live(bool cuda_devices) {
  GpuRead out;
  std::optional<Task<Reading<gpu::CudaReadings>>> cuda_task;
  if (cuda_devices) cuda_task.emplace([] { return gpu::read_cuda_live(true); });
  auto start = Clock::now();
  // NVML is unloaded once read: its 14 MB would otherwise stay through the audit and the
  // rendering, the peak of check's resident set.
  out.nvml = gpu::read_nvml_once();
  out.nvml_ms = ms_since(start);
  if (cuda_task) {
    out.cuda = cuda_task->get();
    out.cuda_ms = cuda_task->elapsed_ms();
  } else {
    bool nvml_listed = out.nvml.ok() && !out.nvml->devices.empty();
    start = Clock::now();
    out.cuda = gpu::read_cuda_live(!nvml_listed);
    out.cuda_ms = ms_since(start);
  }
  return out;
}

// The machine's own readings and the network's, and how long each took.
struct SysRead {
  sys::SysReadings readings;
  decltype(Snapshot::network) network;
  double sys_ms = 0;
  double net_ms = 0;
};

}  // namespace

Snapshot capture(const CaptureOptions& options) {
  auto start = Clock::now();
  char** envp = options.envp ? options.envp : (options.root.live() ? environ : nullptr);
  bool gpu_live = options.read_gpu && options.root.live();

  // NVML's and the CUDA driver's initialisation take tens of ms (cuInit 0.2 s on an H200):
  // they run on their own thread while the file probes and the audit run on this one.
  std::optional<Task<GpuRead>> gpu_task;
  if (gpu_live) {
    gpu_task.emplace([cuda = options.cuda_devices_always] { return read_gpu_live(cuda); });
  }

  pyenv::DiscoveryOptions py;
  py.root = options.root;
  py.python = options.python;
  py.site_packages = options.site_packages;
  py.virtual_env = sys::find_env(envp, "VIRTUAL_ENV").value_or("");
  py.conda_prefix = sys::find_env(envp, "CONDA_PREFIX").value_or("");
  py.path = sys::find_env(envp, "PATH").value_or("");
  py.ld_library_path = sys::find_env(envp, "LD_LIBRARY_PATH").value_or("");
  py.pyenv_version = sys::find_env(envp, "PYENV_VERSION").value_or("");
  py.pyenv_root = sys::find_env(envp, "PYENV_ROOT").value_or("");
  if (char cwd[4096]; ::getcwd(cwd, sizeof cwd) != nullptr) py.cwd = cwd;
  // The loader's cache, read once: torch's CUDA libraries (pyenv) and the audit search it.
  std::vector<elf::LdCacheEntry> ld_cache;
  if (auto cache = elf::read_ld_cache(options.root)) ld_cache = std::move(*cache);
  py.ld_cache = ld_cache;
  // The machine's files and the network on another thread, while this one reads the Python
  // environment and audits it: after a reboot each waits on the disk, and together they wait
  // about as long as the longer of them.
  sys::SysOptions sys_options;
  sys_options.root = options.root;
  sys_options.config_dir = options.config_dir;
  sys_options.envp = envp;
  Task<SysRead> sys_task([&sys_options, &root = options.root] {
    SysRead out;
    auto sys_start = Clock::now();
    out.readings = sys::read_all(sys_options);
    out.sys_ms = ms_since(sys_start);
    auto net_start = Clock::now();
    out.network = net::read_network(root, out.readings.env);
    out.net_ms = ms_since(net_start);
    return out;
  });

  Snapshot s;
  s.sparkdoc_version = kVersion;
  s.taken_at = utc_now_iso8601();

  auto python_start = Clock::now();
  s.python = pyenv::read_python(py);
  s.timings_ms["python"] = ms_since(python_start);

  s.bandwidth = Reading<BandwidthMeasurement>::absent(Why::kAbsent, "not measured");
  if (!options.audit_native) {
    s.native_code = Reading<audit::NativeAudit>::absent(Why::kAbsent, "not audited");
  } else if (auto audit_options = audit_options_with(s, options, std::move(ld_cache))) {
    // Four readers: on a full CUDA stack (844 files) the audit is then ~0.1 s, and each further
    // thread adds a malloc arena to the resident set `check` promises to keep small.
    audit_options->threads = 4;
    audit_options->progress = options.audit_progress;
    auto audit_start = Clock::now();
    audit::AuditStats stats;
    s.native_code = audit::run_audit(*audit_options, &stats);
    s.timings_ms["audit"] = ms_since(audit_start);
    for (const auto& [phase, ms] : stats.phases_ms) s.timings_ms["audit_" + phase] = ms;
  } else {
    s.native_code = Reading<audit::NativeAudit>::absent(audit_options.error().why,
                                                        audit_options.error().message);
  }
  SysRead r = sys_task.get();
  s.timings_ms["sys"] = r.sys_ms;
  s.timings_ms["net"] = r.net_ms;
  s.host = std::move(r.readings.host);
  s.meminfo = std::move(r.readings.meminfo);
  s.vm = std::move(r.readings.vm);
  s.memory_pressure = std::move(r.readings.memory_pressure);
  s.nvidia_module = std::move(r.readings.nvidia_module);
  s.cgroup = std::move(r.readings.cgroup);
  s.container = std::move(r.readings.container);
  s.limits = std::move(r.readings.limits);
  s.env = std::move(r.readings.env);
  s.accelerate_config = std::move(r.readings.accelerate_config);
  s.processes = std::move(r.readings.processes);
  s.parallel_configs = std::move(r.readings.parallel_configs);
  s.kernel_log = std::move(r.readings.kernel_log);
  s.kernel_boot = std::move(r.readings.kernel_boot);
  s.os_release = std::move(r.readings.os_release);
  s.packages = std::move(r.readings.packages);
  s.docker = std::move(r.readings.docker);
  s.shm = std::move(r.readings.shm);
  s.network = std::move(r.network);

  if (gpu_task) {
    GpuRead gpu = gpu_task->get();
    s.gpu.nvml = std::move(gpu.nvml);
    s.gpu.cuda = std::move(gpu.cuda);
    s.timings_ms["nvml"] = gpu.nvml_ms;
    s.timings_ms["cuda"] = gpu.cuda_ms;
  } else {
    std::string why =
        options.read_gpu ? "not read: the snapshot reads a fixture root" : "not read: --no-gpu";
    s.gpu.nvml = nvml_not_read(why);
    s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, why);
  }
  s.timings_ms["total"] = ms_since(start);
  return s;
}

Result<audit::AuditOptions> native_audit_options(const Snapshot& s, const CaptureOptions& options) {
  std::vector<elf::LdCacheEntry> ld_cache;
  if (auto cache = elf::read_ld_cache(options.root)) ld_cache = std::move(*cache);
  return audit_options_with(s, options, std::move(ld_cache));
}

namespace {

Result<audit::AuditOptions> audit_options_with(const Snapshot& s, const CaptureOptions& options,
                                               std::vector<elf::LdCacheEntry> ld_cache) {
  if (!s.python.ok())
    return fail(s.python.missing().why, "no Python environment: " + s.python.reason());
  const pyenv::PythonEnv* env = nullptr;
  for (const pyenv::PythonEnv& e : *s.python) {
    if (e.torch.ok()) {
      env = &e;
      break;
    }
  }
  if (env == nullptr && !s.python->empty()) env = &s.python->front();
  if (env == nullptr || env->site_packages.empty()) {
    return fail(Why::kAbsent, "no site-packages folder found");
  }
  audit::AuditOptions a;
  a.root = options.root;
  a.site_packages = env->site_packages.front();
  if (env->torch.ok()) {
    const std::string& torch_dir = env->torch->location;
    for (const std::string& dir : env->site_packages) {
      if (torch_dir.starts_with(dir + "/")) a.site_packages = dir;
    }
    if (env->torch->cuda.ok()) a.torch_cuda = *env->torch->cuda;
  }
  char** envp = options.envp ? options.envp : (options.root.live() ? environ : nullptr);
  a.ld_library_path = sys::find_env(envp, "LD_LIBRARY_PATH").value_or("");
  a.bnb_cuda_version = sys::find_env(envp, "BNB_CUDA_VERSION").value_or("");
  a.ld_cache = std::move(ld_cache);
  // No cache root (no HOME): the audit reads every file, as with --no-cache.
  if (options.audit_cache) {
    if (auto root = cache_root_from_env()) a.cache_root = std::move(*root);
  }
  return a;
}

}  // namespace

}  // namespace sparkdoc
