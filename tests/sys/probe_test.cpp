#include "sys/probe.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/sys_json.h"
#include "printers.h"

namespace sparkdoc::sys {
namespace {

std::string fixture(const char* name) {
  return std::string(SPARKDOC_FIXTURES) + "/procfs/" + name;
}

SysOptions options_for(const char* name, std::string config_dir = "") {
  SysOptions options;
  options.root = Root(fixture(name));
  options.config_dir = std::move(config_dir);
  return options;
}

// A PyTorch NGC container on a GB10, cgroup v2: /proc/self/cgroup is "0::/" and only the
// files, mountinfo and environment show the container.
TEST(ReadAll, DockerOnCgroup2) {
  SysReadings r = read_all(options_for("docker-cgroup2", "/workspace"));

  EXPECT_EQ(r.host.cpu_arch.value_or(""), "aarch64");
  EXPECT_EQ(r.host.kernel_release.value_or(""), "6.11.0-1016-nvidia");
  EXPECT_EQ(r.host.hostname.value_or(""), "3f4a9c1e7b2d");
  EXPECT_EQ(r.host.cpu_count.value_or(0), 20u);
  EXPECT_FALSE(r.host.dmi_product.ok());

  ASSERT_TRUE(r.meminfo.ok()) << r.meminfo.reason();
  EXPECT_EQ(r.meminfo->mem_total_bytes, 127600748ull * 1024);
  EXPECT_EQ(r.meminfo->mem_available_bytes, 118566368ull * 1024);

  EXPECT_EQ(r.vm.min_free_kbytes.value_or(0), 1048576);
  EXPECT_EQ(r.vm.vfs_cache_pressure.value_or(0), 500);
  EXPECT_FALSE(r.vm.swappiness.ok());

  ASSERT_TRUE(r.memory_pressure.ok());
  EXPECT_EQ(r.memory_pressure->some.total_us, 1204551u);

  ASSERT_TRUE(r.nvidia_module.ok());
  EXPECT_EQ(r.nvidia_module->version, "580.95.05");
  EXPECT_EQ(r.nvidia_module->flavor, "open");

  ASSERT_TRUE(r.cgroup.ok()) << r.cgroup.reason();
  EXPECT_EQ(r.cgroup->version, 2);
  EXPECT_EQ(r.cgroup->self_path, "/");
  EXPECT_EQ(r.cgroup->pid1_path, "/");
  EXPECT_EQ(r.cgroup->self_lines, std::vector<std::string>{"0::/"});
  EXPECT_FALSE(r.cgroup->memory_limit_bytes);

  ContainerMarkers want_markers;
  want_markers.dockerenv = true;
  want_markers.mountinfo_docker = true;
  want_markers.mountinfo_overlay_root = true;
  EXPECT_EQ(r.container, want_markers);

  ASSERT_TRUE(r.limits.memlock_bytes.ok());
  EXPECT_EQ(*r.limits.memlock_bytes, Rlimit{});
  EXPECT_EQ(r.limits.stack_bytes->soft, 67108864u);

  EXPECT_EQ(r.env.count("HF_TOKEN"), 0u);
  EXPECT_EQ(r.env.count("HOME"), 0u);
  EXPECT_EQ(r.env.count("PATH"), 0u);
  EXPECT_EQ(r.env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(r.env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(r.env.at("NVIDIA_PYTORCH_VERSION"), "25.10");
  EXPECT_EQ(r.env.at("TORCH_CUDA_ARCH_LIST"), "8.0 8.6 9.0 10.0 11.0 12.0+PTX");

  ASSERT_TRUE(r.accelerate_config.ok()) << r.accelerate_config.reason();
  EXPECT_EQ(r.accelerate_config->path, "/root/.cache/huggingface/accelerate/default_config.yaml");
  EXPECT_EQ(r.accelerate_config->distributed_type, "FSDP");
  EXPECT_TRUE(r.accelerate_config->has_fsdp_config);
  EXPECT_EQ(r.accelerate_config->num_processes, 2);

  ASSERT_TRUE(r.processes.ok()) << r.processes.reason();
  EXPECT_EQ(r.processes->processes_seen, 5u);
  ASSERT_EQ(r.processes->gpu_holders.size(), 2u);
  EXPECT_EQ(r.processes->gpu_holders[0],
            (GpuHolder{1234,
                       "python3",
                       "python3 -u train.py --config configs/lora.yaml",
                       {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"}}));
  EXPECT_EQ(r.processes->gpu_holders[1].pid, 2399);
  EXPECT_EQ(r.processes->gpu_holders[1].comm, "VLLM::EngineCor");
  ASSERT_EQ(r.processes->servers.size(), 2u);
  EXPECT_EQ(r.processes->servers[0].pid, 2345);
  EXPECT_EQ(r.processes->servers[0].kind, "vllm");
  EXPECT_EQ(r.processes->servers[1].pid, 2399);
  EXPECT_EQ(r.processes->servers[1].kind, "vllm");

  ASSERT_TRUE(r.parallel_configs.ok()) << r.parallel_configs.reason();
  EXPECT_EQ(r.parallel_configs->directory, "/workspace");
  EXPECT_EQ(r.parallel_configs->files_scanned, 4u);  // notes.txt is no config file
  std::vector<ParallelConfigHit> want_hits = {
      {".env", 1, "TP_SIZE", "2"},
      {"run.sh", 4, "tensor-parallel-size", "2"},
      {"configs/deepspeed.json", 3, "tp_size", "2"},
      {"configs/lora.yaml", 4, "tensor_parallel_size", "2"},
  };
  EXPECT_EQ(r.parallel_configs->hits, want_hits);
}

// An x86_64 workstation on a hybrid cgroup v1 host running Docker itself, with GPU servers.
TEST(ReadAll, X86HybridCgroup1Host) {
  SysReadings r = read_all(options_for("x86-cgroup1-host"));

  EXPECT_EQ(r.host.cpu_arch.value_or(""), "x86_64");
  EXPECT_EQ(r.host.cpu_count.value_or(0), 16u);
  EXPECT_EQ(r.host.dmi_product.value_or(""), "Precision 7960 Tower");

  ASSERT_TRUE(r.meminfo.ok());
  EXPECT_EQ(r.meminfo->hugepages_total, 1024u);
  EXPECT_EQ(r.meminfo->hugepages_free, 1000u);

  ASSERT_FALSE(r.memory_pressure.ok());
  EXPECT_EQ(r.memory_pressure.reason(), "absent: kernel without PSI");

  ASSERT_TRUE(r.nvidia_module.ok());
  EXPECT_EQ(r.nvidia_module->version, "550.54.14");
  EXPECT_EQ(r.nvidia_module->flavor, "proprietary");

  ASSERT_TRUE(r.cgroup.ok());
  EXPECT_EQ(r.cgroup->version, 1);
  EXPECT_EQ(r.cgroup->self_path, "/user.slice/user-1000.slice/session-2.scope");
  EXPECT_FALSE(r.cgroup->pid1_path);
  EXPECT_EQ(r.cgroup->memory_limit_bytes, 68719476736u);
  EXPECT_EQ(r.cgroup->self_lines.size(), 13u);

  EXPECT_EQ(r.container, ContainerMarkers{});

  EXPECT_FALSE(r.limits.memlock_bytes.ok());
  EXPECT_FALSE(r.limits.stack_bytes.ok());

  std::map<std::string, std::string> want_env = {{"ACCELERATE_USE_DEEPSPEED", "0"},
                                                 {"ACCELERATE_USE_FSDP", "0"},
                                                 {"CUDA_VISIBLE_DEVICES", "0"},
                                                 {"OMPI_MCA_btl", "^openib"}};
  EXPECT_EQ(r.env, want_env);

  ASSERT_TRUE(r.accelerate_config.ok()) << r.accelerate_config.reason();
  EXPECT_EQ(r.accelerate_config->path,
            "/home/spark/.xdg/huggingface/accelerate/default_config.json");
  EXPECT_EQ(r.accelerate_config->distributed_type, "NO");
  EXPECT_FALSE(r.accelerate_config->has_fsdp_config);

  ASSERT_TRUE(r.processes.ok());
  EXPECT_EQ(r.processes->processes_seen, 7u);
  ASSERT_EQ(r.processes->gpu_holders.size(), 2u);
  EXPECT_EQ(r.processes->gpu_holders[0].pid, 4242);
  EXPECT_EQ(r.processes->gpu_holders[0].devices,
            (std::vector<std::string>{"/dev/nvidia-modeset", "/dev/nvidia0", "/dev/nvidiactl"}));
  EXPECT_EQ(r.processes->gpu_holders[1].pid, 5152);
  EXPECT_EQ(r.processes->gpu_holders[1].devices.size(), 4u);
  std::vector<std::pair<int, std::string>> kinds;
  for (const auto& s : r.processes->servers) kinds.emplace_back(s.pid, s.kind);
  std::vector<std::pair<int, std::string>> want_kinds = {
      {4242, "gnome-remote-desktop"}, {5151, "ollama"}, {5152, "ollama"},
      {6001, "llama-server"},         {6002, "sglang"}, {6003, "tritonserver"}};
  EXPECT_EQ(kinds, want_kinds);

  ASSERT_FALSE(r.parallel_configs.ok());
  EXPECT_EQ(r.parallel_configs.missing().why, Why::kAbsent);
}

TEST(ReadAll, ExplicitEnvironmentAndHome) {
  std::string hf = "HF_HOME=/nowhere";
  std::string rank = "RANK=0";
  std::string token = "HF_TOKEN=x";
  char* envp[] = {hf.data(), rank.data(), token.data(), nullptr};
  SysOptions options = options_for("docker-cgroup2");
  options.envp = envp;
  options.home = "/home/other";
  SysReadings r = read_all(options);
  std::map<std::string, std::string> want = {{"HF_HOME", "/nowhere"}, {"RANK", "0"}};
  EXPECT_EQ(r.env, want);
  ASSERT_FALSE(r.accelerate_config.ok());
  EXPECT_EQ(r.accelerate_config.missing().why, Why::kAbsent);
}

TEST(ReadAll, SnapshotJsonRoundTrip) {
  SysReadings r = read_all(options_for("docker-cgroup2", "/workspace"));
  nlohmann::json j = {{"processes", r.processes},
                      {"cgroup", r.cgroup},
                      {"host", r.host},
                      {"limits", r.limits},
                      {"container", r.container}};
  auto back_processes = j.at("processes").get<Reading<ProcessScan>>();
  EXPECT_EQ(back_processes, r.processes);
  EXPECT_EQ(j.at("host").get<Host>(), r.host);
  EXPECT_EQ(j.at("limits").get<Limits>(), r.limits);
}

// The live machine: only that nothing crashes and the call returns.
TEST(ReadAll, LiveMachineDoesNotCrash) {
  SysOptions options;
  options.config_dir = ".";
  SysReadings r = read_all(options);
  EXPECT_TRUE(r.host.cpu_arch.ok());
  EXPECT_TRUE(r.processes.ok()) << r.processes.reason();
  nlohmann::json j = {{"env", r.env}, {"processes", r.processes}, {"meminfo", r.meminfo}};
  EXPECT_FALSE(j.dump().empty());
}

}  // namespace
}  // namespace sparkdoc::sys
