#include "snapshots.h"

#include <stdexcept>

#include "checks/common.h"
#include "core/names.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks::testing {
namespace {

constexpr uint64_t kKb = 1024;

pyenv::SonameNeed need(std::string soname, std::string by, std::string dir) {
  pyenv::SonameNeed n;
  n.found = dir + "/" + soname;
  n.soname = std::move(soname);
  n.needed_by = {std::move(by)};
  return n;
}

pyenv::Distribution dist(std::string name, std::string version, const std::string& site) {
  pyenv::Distribution d;
  d.location = site + "/" + name + "-" + version + ".dist-info";
  d.name = std::move(name);
  d.version = std::move(version);
  return d;
}

}  // namespace

Snapshot gb10_snapshot() {
  Snapshot s;
  s.sparkdoc_version = "0.1.0";
  s.taken_at = "2026-11-29T12:00:00Z";
  s.host.cpu_arch = std::string("aarch64");
  s.host.kernel_release = std::string("6.17.0-1026-nvidia");
  s.host.hostname = std::string("spark-01");
  s.host.dmi_product = std::string("NVIDIA_DGX_Spark");
  s.host.cpu_count = 20u;
  s.host.is_root = false;

  sys::MemInfo m;
  m.mem_total_bytes = 127'600'748 * kKb;
  m.mem_free_bytes = 114'912'356 * kKb;
  m.mem_available_bytes = 118'566'368 * kKb;
  m.buffers_bytes = 310'224 * kKb;
  m.cached_bytes = 3'688'416 * kKb;
  m.shmem_bytes = 152'340 * kKb;
  m.dirty_bytes = 1'024 * kKb;
  m.anon_pages_bytes = 2'145'600 * kKb;
  m.hugepage_size_bytes = 2048 * kKb;
  s.meminfo = m;

  s.vm.min_free_kbytes = int64_t{45166};
  s.vm.vfs_cache_pressure = int64_t{100};
  s.vm.swappiness = int64_t{60};
  s.nvidia_module = sys::NvidiaKernelModule{"580.95.05", "open", "NVRM version: ..."};
  s.cgroup = sys::CgroupInfo{2, "/", {"0::/"}, std::nullopt, std::nullopt};
  s.container.dockerenv = true;
  s.container.mountinfo_overlay_root = true;

  sys::Rlimit unlimited;
  s.limits.memlock_bytes = unlimited;
  s.limits.stack_bytes = sys::Rlimit{67'108'864, 67'108'864};
  s.limits.shm_size_bytes = uint64_t{63'800'373'248};

  s.env = {
      {"NVIDIA_PYTORCH_VERSION", "25.10"},
      {"NVIDIA_PRODUCT_NAME", "PyTorch"},
      {"PYTORCH_VERSION", "2.9.0a0+145a3a7"},
      {"CUDA_VERSION", "13.0.2.006"},
      {"CUDA_DRIVER_VERSION", "580.95.05"},
      {"NVIDIA_VISIBLE_DEVICES", "all"},
      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:512"},
      {"TOKENIZERS_PARALLELISM", "false"},
  };
  s.accelerate_config = Reading<sys::AccelerateConfig>::absent(
      Why::kAbsent, "/root/.cache/huggingface/accelerate/default_config.yaml does not exist");
  s.processes = sys::ProcessScan{{}, {}, 38, 0};
  s.parallel_configs = sys::ParallelConfigScan{"/workspace", 4, {}};

  gpu::NvmlReadings nvml;
  nvml.library = "libnvidia-ml.so.1";
  nvml.driver_version = std::string("580.95.05");
  nvml.cuda_driver_version = 13000;
  nvml.nvml_version = std::string("13.580.95.05");
  gpu::Device d;
  d.index = 0;
  d.name = std::string("NVIDIA GB10");
  d.uuid = std::string("GPU-5f3c1c8e-0000-0000-0000-000000000000");
  d.pci_bus_id = std::string("0000000F:01:00.0");
  d.compute_capability = gpu::ComputeCapability{12, 1};
  d.memory = Reading<gpu::MemoryInfo>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  d.temperature_c = 45u;
  d.power_usage_mw = 11'000u;
  d.power_limit_mw = Reading<unsigned>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  d.power_default_limit_mw = d.power_limit_mw;
  d.power_max_limit_mw = d.power_limit_mw;
  d.sm_clock_mhz = 2522u;
  d.mem_clock_mhz = Reading<unsigned>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  d.max_sm_clock_mhz = 3003u;
  d.utilization_pct = 10u;
  d.pstate = 0u;
  d.clock_event_reasons = uint64_t{0};
  d.clock_event_counters.sw_power_cap_ns = uint64_t{10'800'240'649'000};
  d.clock_event_counters.sync_boost_ns = uint64_t{0};
  d.clock_event_counters.sw_thermal_ns = uint64_t{0};
  d.clock_event_counters.hw_thermal_ns = uint64_t{1'195'386'000};
  d.clock_event_counters.hw_power_brake_ns = uint64_t{0};
  d.processes = std::vector<gpu::GpuProcess>{};
  nvml.devices.push_back(d);
  s.gpu.nvml = nvml;

  gpu::CudaReadings cuda;
  cuda.library = "libcuda.so.1";
  cuda.driver_version = 13000;
  gpu::CudaDevice c;
  c.ordinal = 0;
  c.name = std::string("NVIDIA GB10");
  c.compute_capability = gpu::ComputeCapability{12, 1};
  c.total_memory_bytes = uint64_t{128'501'256'192};
  c.integrated = true;
  c.pageable_memory_access = true;
  c.multiprocessors = 48;
  cuda.devices.push_back(c);
  s.gpu.cuda = cuda;

  const std::string site = "/usr/local/lib/python3.12/dist-packages";
  const std::string cuda_lib = "/usr/local/cuda/lib64";
  pyenv::PythonEnv env;
  env.source = "PATH";
  env.prefix = "/usr";
  env.interpreter = "/usr/bin/python3";
  env.python_version = "3.12";
  env.site_packages = {site};
  for (auto& d2 : {dist("torch", "2.9.0a0+145a3a7.nv25.10", site),
                   dist("transformers", "5.5.3", site), dist("peft", "0.14.0", site),
                   dist("accelerate", "1.3.0", site), dist("triton", "3.4.0", site)}) {
    env.packages[pep503_name(d2.name)] = d2;
  }
  pyenv::TorchInfo torch;
  torch.location = site + "/torch";
  torch.version = std::string("2.9.0a0+145a3a7.nv25.10");
  torch.cuda = std::string("13.0");
  torch.arch_list = std::string("sm_80 sm_86 sm_90 sm_100 sm_110 sm_120 compute_120");
  torch.cuda_sonames = std::vector<pyenv::SonameNeed>{
      need("libcudart.so.13", "libtorch_cuda.so", cuda_lib),
      need("libcublas.so.13", "libtorch_cuda.so", cuda_lib),
      need("libcublasLt.so.13", "libtorch_cuda.so", cuda_lib),
      need("libcufft.so.12", "libtorch_cuda.so", cuda_lib),
      need("libcusolver.so.12", "libtorch_cuda.so", cuda_lib),
      need("libcusparse.so.12", "libtorch_cuda.so", cuda_lib),
      need("libcurand.so.10", "libtorch_cuda.so", cuda_lib),
      need("libnvrtc.so.13", "libtorch_cuda.so", cuda_lib),
      need("libnvJitLink.so.13", "libcusparse.so.12", cuda_lib),
      need("libcupti.so.13", "libtorch_cuda.so", "/usr/local/cuda/extras/CUPTI/lib64"),
      need("libcudnn.so.9", "libtorch_cuda.so", "/usr/lib/aarch64-linux-gnu"),
      need("libnccl.so.2", "libtorch_cuda.so", "/usr/lib/aarch64-linux-gnu"),
      need("libcuda.so.1", "libtorch_cuda.so", "/usr/lib/aarch64-linux-gnu"),
  };
  env.torch = torch;
  s.python = std::vector<pyenv::PythonEnv>{env};
  return s;
}

net::NetReadings paired_spark_network() {
  net::NetReadings n;
  auto interface = [&](std::string name, std::string pci, bool up) {
    net::Interface i;
    i.name = std::move(name);
    i.type = 1;
    i.mtu = 9000;
    i.operstate = up ? "up" : "down";
    if (up) {
      i.speed_mbps = 200000;
      i.carrier = true;
    }
    i.carrier_changes = 2;
    i.driver = "mlx5_core";
    i.pci_address = std::move(pci);
    n.interfaces.push_back(std::move(i));
  };
  interface("enP2p1s0f0np0", "0002:01:00.0", true);
  interface("enP2p1s0f1np1", "0002:01:00.1", false);
  interface("enp1s0f0np0", "0000:01:00.0", true);
  interface("enp1s0f1np1", "0000:01:00.1", false);
  auto device = [&](std::string name, std::string pci, std::string netdev, bool up,
                    std::string gid) {
    net::RdmaDevice d;
    d.name = std::move(name);
    d.hca_type = "MT4129";
    d.fw_ver = "28.45.4028";
    d.pci_address = std::move(pci);
    d.netdevs = {netdev};
    net::RdmaPort port;
    port.number = 1;
    port.state = up ? "4: ACTIVE" : "1: DOWN";
    port.phys_state = up ? "5: LinkUp" : "3: Disabled";
    port.rate = up ? "200 Gb/sec (4X HDR)" : "40 Gb/sec (4X QDR)";
    port.rate_gbps = up ? 200 : 40;
    port.link_layer = "Ethernet";
    if (up) port.gids.push_back(net::Gid{3, std::move(gid), "RoCE v2", netdev});
    d.ports.push_back(std::move(port));
    n.rdma.push_back(std::move(d));
  };
  device("roceP2p1s0f0", "0002:01:00.0", "enP2p1s0f0np0", true,
         "0000:0000:0000:0000:0000:ffff:c0a8:6502");
  device("roceP2p1s0f1", "0002:01:00.1", "enP2p1s0f1np1", false, "");
  device("rocep1s0f0", "0000:01:00.0", "enp1s0f0np0", true,
         "0000:0000:0000:0000:0000:ffff:c0a8:6402");
  device("rocep1s0f1", "0000:01:00.1", "enp1s0f1np1", false, "");
  n.nccl_conf = Reading<net::NcclConfFile>::absent(Why::kAbsent, "no /etc/nccl.conf");
  net::LogindIpc logind;
  logind.remove_ipc = false;
  logind.remove_ipc_source = "/etc/systemd/logind.conf.d/10-keep-ipc.conf";
  logind.files_read = {"/etc/systemd/logind.conf", logind.remove_ipc_source};
  logind.session_users = {"spark"};
  n.logind = logind;
  return n;
}

Snapshot h200_snapshot() {
  Snapshot s;
  s.sparkdoc_version = "0.1.0";
  s.taken_at = "2026-11-29T12:00:00Z";
  s.host.cpu_arch = std::string("x86_64");
  s.host.kernel_release = std::string("6.8.0-49-generic");
  s.host.hostname = std::string("h200-01");
  s.host.cpu_count = 64u;

  sys::MemInfo m;
  m.mem_total_bytes = 1'056'512'000 * kKb;
  m.mem_free_bytes = 900'000'000 * kKb;
  m.mem_available_bytes = 1'000'000'000 * kKb;
  m.buffers_bytes = 1'000'000 * kKb;
  m.cached_bytes = 90'000'000 * kKb;
  m.shmem_bytes = 500'000 * kKb;
  m.hugepage_size_bytes = 2048 * kKb;
  s.meminfo = m;
  s.vm.min_free_kbytes = int64_t{90112};
  s.vm.vfs_cache_pressure = int64_t{100};
  s.vm.swappiness = int64_t{60};
  s.cgroup = sys::CgroupInfo{
      2, "/user.slice/user-1000.slice/session-3.scope", {}, std::nullopt, std::nullopt};
  s.limits.memlock_bytes = sys::Rlimit{8 * kMiB, 8 * kMiB};
  s.limits.stack_bytes = sys::Rlimit{8 * kMiB, std::nullopt};
  s.limits.shm_size_bytes = uint64_t{540'000'000'000};
  s.env = {{"VIRTUAL_ENV", "/opt/venv"}};
  s.accelerate_config = Reading<sys::AccelerateConfig>::absent(Why::kAbsent, "no config");
  s.processes = sys::ProcessScan{{}, {}, 612, 40};
  s.parallel_configs = sys::ParallelConfigScan{"/home/user/run", 2, {}};

  gpu::NvmlReadings nvml;
  nvml.library = "libnvidia-ml.so.1";
  nvml.driver_version = std::string("580.95.05");
  nvml.cuda_driver_version = 13000;
  gpu::Device d;
  d.index = 0;
  d.name = std::string("NVIDIA H200");
  d.bus_type = std::string("pcie");
  d.compute_capability = gpu::ComputeCapability{9, 0};
  d.memory = gpu::MemoryInfo{143'771 * kMiB, 143'100 * kMiB, 671 * kMiB};
  d.temperature_c = 31u;
  d.power_usage_mw = 75'000u;
  d.power_limit_mw = 700'000u;
  d.sm_clock_mhz = 345u;
  d.max_sm_clock_mhz = 1980u;
  d.utilization_pct = 0u;
  d.clock_event_reasons = gpu::kReasonGpuIdle;
  d.processes = std::vector<gpu::GpuProcess>{};
  nvml.devices.push_back(d);
  s.gpu.nvml = nvml;

  gpu::CudaReadings cuda;
  cuda.driver_version = 13000;
  gpu::CudaDevice c;
  c.name = std::string("NVIDIA H200");
  c.compute_capability = gpu::ComputeCapability{9, 0};
  c.total_memory_bytes = uint64_t{143'771} * kMiB;
  c.integrated = false;
  cuda.devices.push_back(c);
  s.gpu.cuda = cuda;

  const std::string site = "/opt/venv/lib/python3.12/site-packages";
  const std::string nv = site + "/nvidia";
  pyenv::PythonEnv env;
  env.source = "VIRTUAL_ENV";
  env.prefix = "/opt/venv";
  env.python_version = "3.12";
  env.site_packages = {site};
  for (auto& d2 :
       {dist("torch", "2.11.0+cu130", site), dist("triton", "3.6.0", site),
        dist("transformers", "5.5.3", site), dist("nvidia-cuda-runtime", "13.0.96", site)}) {
    env.packages[pep503_name(d2.name)] = d2;
  }
  pyenv::TorchInfo torch;
  torch.location = site + "/torch";
  torch.version = std::string("2.11.0+cu130");
  torch.cuda = std::string("13.0");
  torch.cuda_sonames = std::vector<pyenv::SonameNeed>{
      need("libcudart.so.13", "libtorch_cuda.so", nv + "/cuda_runtime/lib"),
      need("libcublas.so.13", "libtorch_cuda.so", nv + "/cublas/lib"),
      need("libcudnn.so.9", "libtorch_cuda.so", nv + "/cudnn/lib"),
  };
  env.torch = torch;
  s.python = std::vector<pyenv::PythonEnv>{env};
  return s;
}

gpu::Device& nvml_device(Snapshot& s, size_t index) {
  return s.gpu.nvml->devices.at(index);
}
pyenv::PythonEnv& python_env(Snapshot& s, size_t index) {
  return s.python->at(index);
}
pyenv::TorchInfo& torch_info(Snapshot& s, size_t index) {
  return *python_env(s, index).torch;
}
sys::MemInfo& meminfo(Snapshot& s) {
  return *s.meminfo;
}

void set_dist(Snapshot& s, std::string_view name, std::string version) {
  pyenv::Distribution d;
  d.name = std::string(name);
  d.version = std::move(version);
  python_env(s).packages[pep503_name(name)] = d;
}

Workload with_command(std::string command) {
  Workload w;
  w.command = std::move(command);
  return w;
}

Finding run_one(std::string_view id, const Snapshot& s, const Workload& w) {
  const CheckInfo* info = find_check(id);
  if (!info) throw std::invalid_argument("no check " + std::string(id));
  return info->run(s, w, facts::classify_platform(s));
}

}  // namespace sparkdoc::checks::testing
