#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/registry.h"
#include "core/units.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;
using testing::nvml_device;
using testing::python_env;
using testing::run_one;
using testing::set_dist;
using testing::with_command;

sys::AccelerateConfig accelerate(std::string type) {
  sys::AccelerateConfig c;
  c.path = "/root/.cache/huggingface/accelerate/default_config.yaml";
  c.distributed_type = std::move(type);
  c.num_processes = 1;
  return c;
}

// S1

TEST(S1DistributedEnv, CleanPasses) {
  EXPECT_EQ(run_one("S1", gb10_snapshot()).verdict, Verdict::kPass);
}

TEST(S1DistributedEnv, LeftoversOnSingleNodeWarn) {
  Snapshot s = gb10_snapshot();
  s.env["WORLD_SIZE"] = "1";
  s.env["MASTER_ADDR"] = "10.0.0.2";
  s.env["NCCL_SOCKET_IFNAME"] = "enp1s0f0np0";
  s.env["OMPI_COMM_WORLD_RANK"] = "0";
  Finding f = run_one("S1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("MASTER_ADDR, OMPI_COMM_WORLD_RANK, WORLD_SIZE, "
                                  "NCCL_SOCKET_IFNAME set on a single-node run"));
  EXPECT_THAT(f.detail, HasSubstr("sparkdoc run"));
}

TEST(S1DistributedEnv, NgcNcclVersionLabelIsNotALeftover) {
  Snapshot s = gb10_snapshot();
  s.env["NCCL_VERSION"] = "2.27.7";
  EXPECT_EQ(run_one("S1", s).verdict, Verdict::kPass);
}

// Images set MPI and NCCL tuning (the GPU machine's CUDA image sets OMPI_MCA_plm); those start
// no multi-process initialisation, so they are reported, not warned about.
TEST(S1DistributedEnv, ImageTuningVariablesAreInfoNotWarn) {
  Snapshot s = gb10_snapshot();
  s.env["OMPI_MCA_plm"] = "isolated";
  s.env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none";
  Finding f = run_one("S1", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("no launch state set"));
}

TEST(S1DistributedEnv, MultiNodeRunIsInfo) {
  Snapshot s = gb10_snapshot();
  s.env["SLURM_NNODES"] = "2";
  s.env["MASTER_ADDR"] = "10.0.0.2";
  Finding f = run_one("S1", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("2-node run (SLURM_NNODES=2)"));
}

// S2

TEST(S2AccelerateConfig, AbsentPasses) {
  Finding f = run_one("S2", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "no cached accelerate config");
}

TEST(S2AccelerateConfig, FsdpConfigWarns) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = accelerate("FSDP");
  Finding f = run_one("S2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("sets distributed_type FSDP"));
  EXPECT_THAT(f.detail, HasSubstr("ACCELERATE_USE_FSDP=0 ACCELERATE_USE_DEEPSPEED=0"));
}

TEST(S2AccelerateConfig, BothOverridesPass) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = accelerate("DEEPSPEED");
  s.env["ACCELERATE_USE_FSDP"] = "0";
  s.env["ACCELERATE_USE_DEEPSPEED"] = "False";
  Finding f = run_one("S2", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("overridden by ACCELERATE_USE_FSDP=0"));
}

TEST(S2AccelerateConfig, OneOverrideIsNotEnough) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = accelerate("MULTI_GPU");
  s.env["ACCELERATE_USE_FSDP"] = "0";
  EXPECT_EQ(run_one("S2", s).verdict, Verdict::kWarn);
}

TEST(S2AccelerateConfig, NoDistributedTypePassesUnlessASectionSaysOtherwise) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = accelerate("NO");
  EXPECT_EQ(run_one("S2", s).verdict, Verdict::kPass);
  s.accelerate_config->has_deepspeed_config = true;
  Finding f = run_one("S2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("a deepspeed_config section"));
}

TEST(S2AccelerateConfig, UnreadableSkips) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = Reading<sys::AccelerateConfig>::absent(Why::kNoPermission, "EACCES");
  Finding f = run_one("S2", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("no permission: EACCES"));
}

TEST(S2AccelerateConfig, MultiNodeRunIsInfo) {
  Snapshot s = gb10_snapshot();
  s.accelerate_config = accelerate("MULTI_GPU");
  s.accelerate_config->num_machines = 2;
  EXPECT_EQ(run_one("S2", s).verdict, Verdict::kInfo);
}

// S3

TEST(S3AllocConf, RecommendedPasses) {
  Finding f = run_one("S3", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512");
}

TEST(S3AllocConf, UnsetOnUnifiedMemoryWarns) {
  Snapshot s = gb10_snapshot();
  s.env.erase("PYTORCH_CUDA_ALLOC_CONF");
  Finding f = run_one("S3", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("PYTORCH_CUDA_ALLOC_CONF is unset"));
  EXPECT_THAT(f.detail, HasSubstr("expandable_segments:True,max_split_size_mb:512"));
}

TEST(S3AllocConf, WithoutExpandableSegmentsWarns) {
  Snapshot s = gb10_snapshot();
  s.env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:False";
  EXPECT_THAT(run_one("S3", s).detail, HasSubstr("lacks expandable_segments:True"));
}

TEST(S3AllocConf, UnsetOnDiscreteIsInfo) {
  EXPECT_EQ(run_one("S3", h200_snapshot()).verdict, Verdict::kInfo);
}

TEST(S3AllocConf, ExpandableAloneMentionsMaxSplit) {
  Snapshot s = gb10_snapshot();
  s.env.erase("PYTORCH_CUDA_ALLOC_CONF");
  s.env["PYTORCH_ALLOC_CONF"] = "expandable_segments:True";
  Finding f = run_one("S3", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("PYTORCH_ALLOC_CONF=expandable_segments:True"));
  EXPECT_THAT(f.detail, HasSubstr("max_split_size_mb:512"));
}

// S4

TEST(S4TokenizersParallelism, FalsePasses) {
  EXPECT_EQ(run_one("S4", gb10_snapshot()).verdict, Verdict::kPass);
}

TEST(S4TokenizersParallelism, UnsetOrTrueWarns) {
  Snapshot s = gb10_snapshot();
  s.env.erase("TOKENIZERS_PARALLELISM");
  Finding f = run_one("S4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("export TOKENIZERS_PARALLELISM=false"));
  s.env["TOKENIZERS_PARALLELISM"] = "true";
  EXPECT_EQ(run_one("S4", s).verdict, Verdict::kWarn);
}

TEST(S4TokenizersParallelism, OtherOffSpellingsPass) {
  Snapshot s = gb10_snapshot();
  s.env["TOKENIZERS_PARALLELISM"] = "0";
  EXPECT_EQ(run_one("S4", s).verdict, Verdict::kPass);
  s.env["TOKENIZERS_PARALLELISM"] = "FALSE";
  EXPECT_EQ(run_one("S4", s).verdict, Verdict::kPass);
}

// S5

TEST(S5ContainerLimits, RecipeFlagsPass) {
  Finding f = run_one("S5", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("memlock unlimited"));
}

TEST(S5ContainerLimits, DockerDefaultsWarnWithFlags) {
  Snapshot s = gb10_snapshot();
  s.limits.memlock_bytes = sys::Rlimit{8 * kMiB, 8 * kMiB};
  s.limits.stack_bytes = sys::Rlimit{8 * kMiB, std::nullopt};
  s.limits.shm_size_bytes = uint64_t{64 * kMiB};
  Finding f = run_one("S5", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("--ulimit memlock=-1"));
  EXPECT_THAT(f.detail, HasSubstr("--ulimit stack=67108864"));
  EXPECT_THAT(f.detail, HasSubstr("--ipc=host"));
}

TEST(S5ContainerLimits, BareHostIsInfo) {
  Finding f = run_one("S5", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_EQ(f.detail, "bare host: memlock 8.0 MiB, stack 8.0 MiB, /dev/shm 502.9 GiB");
}

TEST(S5ContainerLimits, UnreadLimitSkipsInsteadOfPassing) {
  Snapshot s = gb10_snapshot();
  s.limits.memlock_bytes = Reading<sys::Rlimit>::absent(Why::kError, "getrlimit failed");
  Finding f = run_one("S5", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("memlock: error: getrlimit failed"));
}

// S6

TEST(S6VmTunables, DefaultsPass) {
  Finding f = run_one("S6", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "min_free_kbytes=45166, vfs_cache_pressure=100, swappiness=60");
}

TEST(S6VmTunables, LoadWindowValuesWarn) {
  Snapshot s = gb10_snapshot();
  s.vm.min_free_kbytes = int64_t{1048576};
  s.vm.vfs_cache_pressure = int64_t{500};
  Finding f = run_one("S6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("left from a previous load window"));
  EXPECT_THAT(f.detail, HasSubstr("sparkdoc clean --restore"));
}

TEST(S6VmTunables, OtherCachePressureWarnsAsChanged) {
  Snapshot s = gb10_snapshot();
  s.vm.vfs_cache_pressure = int64_t{200};
  Finding f = run_one("S6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("vfs_cache_pressure=200 changed from the default"));
}

TEST(S6VmTunables, RamScaledMinFreeIsNotFlagged) {
  Snapshot s = gb10_snapshot();
  s.vm.min_free_kbytes = int64_t{67584};
  EXPECT_EQ(run_one("S6", s).verdict, Verdict::kPass);
}

TEST(S6VmTunables, UnreadSkips) {
  Snapshot s = gb10_snapshot();
  s.vm = sys::VmTunables{};
  EXPECT_EQ(run_one("S6", s).verdict, Verdict::kSkip);
}

// S7

TEST(S7RemoteDesktop, NotRunningPasses) {
  EXPECT_EQ(run_one("S7", gb10_snapshot()).verdict, Verdict::kPass);
}

TEST(S7RemoteDesktop, KnownServerOnSparkWarns) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back(
      {2345, "gnome-remote-desktop", "/usr/libexec/gnome-remote-desktop-daemon"});
  Finding f = run_one("S7", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("gnome-remote-desktop (pid 2345) holds a CUDA context (~6 GB"));
  EXPECT_THAT(f.detail, HasSubstr("systemctl --user stop gnome-remote-desktop.service"));
}

TEST(S7RemoteDesktop, HolderCommIsTruncatedAndMeasured) {
  Snapshot s = gb10_snapshot();
  s.processes->gpu_holders.push_back({2345, "gnome-remote-de", "", {"/dev/nvidia0"}});
  gpu::GpuProcess p;
  p.pid = 2345;
  p.used_bytes = uint64_t{6'100'000'000};
  nvml_device(s).processes->push_back(p);
  Finding f = run_one("S7", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("holds 6.1 GB of GPU memory"));
}

TEST(S7RemoteDesktop, DiscreteIsInfo) {
  Snapshot s = h200_snapshot();
  s.processes->servers.push_back({2345, "gnome-remote-desktop", "gnome-remote-desktop-daemon"});
  EXPECT_EQ(run_one("S7", s).verdict, Verdict::kInfo);
}

TEST(S7RemoteDesktop, NoScanSkips) {
  Snapshot s = gb10_snapshot();
  s.processes = Reading<sys::ProcessScan>::absent(Why::kError, "opendir /proc failed");
  EXPECT_EQ(run_one("S7", s).verdict, Verdict::kSkip);
}

TEST(S7RemoteDesktop, SystemModeDaemonIsStoppedWithSudo) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back(
      {2345, "gnome-remote-desktop", "/usr/libexec/gnome-remote-desktop-daemon --system"});
  Finding f = run_one("S7", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("sudo systemctl stop gnome-remote-desktop.service"));
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("--user")));
}

// S10
TEST(S10OrphanedMemory, HealthySparkPasses) {
  Finding f = run_one("S10", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("within the 8.6 GB a healthy machine keeps"));
}

// 000 §6: three killed containers, ~19 GB gone from MemFree and from no process.
TEST(S10OrphanedMemory, KilledContainersWarn) {
  Snapshot s = gb10_snapshot();
  s.meminfo.value().mem_free_bytes -= uint64_t{19'000'000'000};
  s.meminfo.value().mem_available_bytes -= uint64_t{19'000'000'000};
  Finding f = run_one("S10", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("held by no live process"));
  EXPECT_THAT(f.detail, HasSubstr("docker rm -f"));
  EXPECT_FALSE(f.details.empty());
}

TEST(S10OrphanedMemory, UnreadProcessListIsOnlyInfo) {
  Snapshot s = gb10_snapshot();
  s.meminfo.value().mem_free_bytes -= uint64_t{19'000'000'000};
  nvml_device(s).processes = Reading<std::vector<gpu::GpuProcess>>::absent(
      Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED (3)");
  EXPECT_EQ(run_one("S10", s).verdict, Verdict::kInfo);
}

TEST(S10OrphanedMemory, NoMeminfoSkips) {
  Snapshot s = gb10_snapshot();
  s.meminfo = Reading<sys::MemInfo>::absent(Why::kError, "open failed");
  Finding f = run_one("S10", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("/proc/meminfo"));
}

TEST(S10OrphanedMemory, DiscreteGpuWithUnlistedMemoryWarns) {
  Snapshot s = h200_snapshot();
  EXPECT_EQ(run_one("S10", s).verdict, Verdict::kPass) << run_one("S10", s).detail;
  nvml_device(s).memory.value().used_bytes += uint64_t{20'000'000'000};
  Finding f = run_one("S10", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("fuser -v /dev/nvidia*"));
}

// S8

TEST(S8Transformers, NativeNemotronHPasses) {
  EXPECT_EQ(run_one("S8", gb10_snapshot()).verdict, Verdict::kPass);
}

TEST(S8Transformers, OlderReleasesAreJudgedForTheFamilyTheCommandNames) {
  Snapshot s = gb10_snapshot();
  set_dist(s, "transformers", "5.3.0");
  // No model named: 5.3.0 is 001's Unsloth pairing, so no WARN for everyone (the old rule).
  Finding none = run_one("S8", s);
  EXPECT_EQ(none.verdict, Verdict::kInfo);
  EXPECT_THAT(none.detail, HasSubstr("right for 001's Qwen3.5 MoE stacks"));
  Finding nemotron =
      run_one("S8", s, with_command("python train.py nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"));
  EXPECT_EQ(nemotron.verdict, Verdict::kWarn);
  EXPECT_THAT(nemotron.detail, HasSubstr("older than 5.5.3, the first release that supports "
                                         "Nemotron-H"));
  Finding qwen = run_one("S8", s, with_command("python train.py --model Qwen/Qwen3.5-35B-A3B"));
  EXPECT_EQ(qwen.verdict, Verdict::kPass);
  EXPECT_THAT(qwen.detail, HasSubstr("supports Qwen3.5 MoE"));
  set_dist(s, "transformers", "4.56.2");
  EXPECT_EQ(run_one("S8", s).verdict, Verdict::kWarn);
  EXPECT_THAT(run_one("S8", s).detail, HasSubstr("qwen3_5_moe"));
}

TEST(S8Transformers, UnslothWantsTheTransformersItWasValidatedWith) {
  Snapshot s = gb10_snapshot();
  set_dist(s, "unsloth", "2026.3.4");
  set_dist(s, "transformers", "5.5.3");  // what the old S8 told every user to pin
  Finding f = run_one("S8", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("Unsloth 2026.3.4 (001) was validated with transformers 5.2.0, "
                                  "not 5.5.3"));
  // 000 runs Unsloth with --no-deps on Nemotron-H's pins: no pairing WARN for that family.
  EXPECT_EQ(run_one("S8", s, with_command("python train.py nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B"))
                .verdict,
            Verdict::kPass);
  set_dist(s, "transformers", "5.2.0");
  EXPECT_EQ(run_one("S8", s, with_command("python train.py Qwen/Qwen3.5-35B-A3B")).verdict,
            Verdict::kPass);
  set_dist(s, "unsloth", "2026.3.17");
  EXPECT_THAT(run_one("S8", s).detail, HasSubstr("validated with transformers 5.3.0"));
  set_dist(s, "unsloth", "2027.1.1");  // a release no recipe validated: nothing to say about it
  EXPECT_NE(run_one("S8", s).verdict, Verdict::kWarn);
}

TEST(S8Transformers, VersionTenIsNewerThanFive) {
  // A string comparison would put "5.10.0" before "5.5.3".
  Snapshot s = gb10_snapshot();
  set_dist(s, "transformers", "5.10.0");
  EXPECT_EQ(run_one("S8", s).verdict, Verdict::kPass);
}

TEST(S8Transformers, TrustRemoteCodeWarns) {
  Snapshot s = gb10_snapshot();
  Finding f = run_one("S8", s, with_command("python train.py trust_remote_code=True"));
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("trusts remote code"));
  EXPECT_EQ(run_one("S8", s, with_command("vllm serve m --trust-remote-code")).verdict,
            Verdict::kWarn);
  EXPECT_EQ(run_one("S8", s, with_command("python train.py trust_remote_code=False")).verdict,
            Verdict::kPass);
}

TEST(S8Transformers, AbsentSkips) {
  Snapshot s = gb10_snapshot();
  python_env(s).packages.erase("transformers");
  Finding f = run_one("S8", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("transformers not installed in /usr (python3 on PATH)"));
}

}  // namespace
}  // namespace sparkdoc::checks
