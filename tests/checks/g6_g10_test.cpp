#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/playbook_issues.h"
#include "checks/registry.h"
#include "core/units.h"
#include "facts/python.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::nvml_device;
using testing::python_env;
using testing::run_one;
using testing::set_dist;
using testing::torch_info;
using testing::with_command;

void add_gpu_process(Snapshot& s, uint32_t pid, uint64_t bytes) {
  gpu::GpuProcess p;
  p.pid = pid;
  p.type = "compute";
  p.used_bytes = bytes;
  nvml_device(s).processes->push_back(p);
}

void add_holder(Snapshot& s, int pid, std::string comm) {
  s.processes->gpu_holders.push_back(
      {pid, std::move(comm), "", {"/dev/nvidia0", "/dev/nvidiactl"}});
}

Workload with_playbook(std::string name) {
  Workload w;
  w.playbook = std::move(name);
  return w;
}

// G6

TEST(G6Contention, IdlePasses) {
  Finding f = run_one("G6", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "no other GPU processes or servers");
}

TEST(G6Contention, UncappedVllmWarns) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back({4242, "vllm", "python3 -m vllm.entrypoints.openai.api_server"});
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("vllm (pid 4242) is not capped"));
  EXPECT_THAT(f.detail, HasSubstr("defaults to 0.9"));
  EXPECT_THAT(f.detail, HasSubstr("--gpu-memory-utilization 0.5 or less"));
}

TEST(G6Contention, VllmCapAboveHalfWarns) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back({4242, "vllm", "vllm serve m --gpu-memory-utilization=0.9"});
  EXPECT_THAT(run_one("G6", s).detail, HasSubstr("--gpu-memory-utilization 0.9"));
  EXPECT_EQ(run_one("G6", s).verdict, Verdict::kWarn);
}

TEST(G6Contention, VllmCappedAtHalfPasses) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back({4242, "vllm", "vllm serve m --gpu_memory_utilization 0.45"});
  add_gpu_process(s, 4242, 3 * kGB);
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail,
              HasSubstr("vllm (pid 4242, 3.0 GB) capped (--gpu-memory-utilization 0.45)"));
}

TEST(G6Contention, ServerHoldingMemoryIsJudgedOnceByItsCap) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back({4242, "vllm", "vllm serve Qwen/Qwen3-32B"});
  add_holder(s, 4242, "python3");
  add_gpu_process(s, 4242, 20 * kGB);
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("vllm (pid 4242, 20.0 GB) is not capped"));
  EXPECT_THAT(f.detail, Not(HasSubstr("holds more than")));
}

TEST(G6Contention, ServerWithoutACapWarns) {
  Snapshot s = gb10_snapshot();
  s.processes->servers.push_back({900, "ollama", "/usr/local/bin/ollama serve"});
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("ollama (pid 900) is not capped (no memory cap)"));
}

TEST(G6Contention, BigProcessWarnsWithNameFromHolderScan) {
  Snapshot s = gb10_snapshot();
  add_gpu_process(s, 777, 20 * kGB);
  add_holder(s, 777, "python3");
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("pid 777 (python3) 20.0 GB holds more than 4.0 GB"));
}

TEST(G6Contention, SmallProcessCoexists) {
  Snapshot s = gb10_snapshot();
  add_gpu_process(s, 1500, 84 * kMiB);
  add_holder(s, 1500, "Xorg");
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("only small or capped GPU users: pid 1500 (Xorg) 0.1 GB"));
}

// A Spark whose gnome-remote-desktop daemon holds `bytes` of GPU memory.
Snapshot with_remote_desktop(uint64_t bytes) {
  Snapshot s = gb10_snapshot();
  add_gpu_process(s, 2345, bytes);
  add_holder(s, 2345, "gnome-remote-de");
  s.processes->servers.push_back(
      {2345, "gnome-remote-desktop", "/usr/libexec/gnome-remote-desktop-daemon"});
  return s;
}

TEST(G6Contention, ASmallRemoteDesktopIsMentionedOnly) {
  Snapshot s = with_remote_desktop(1 * kGB);
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("gnome-remote-desktop (see S7)"));
  EXPECT_EQ(run_one("S7", s).verdict, Verdict::kWarn);
}

// A 6 GB desktop service is not one of the "small or capped GPU users".
TEST(G6Contention, ARemoteDesktopHoldingGigabytesIsAWarning) {
  Finding f = run_one("G6", with_remote_desktop(6 * kGB));
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("is gnome-remote-desktop holding more than 4.0 GB"));
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("small or capped")));
}

TEST(G6Contention, HolderUnknownToNvmlIsADetail) {
  Snapshot s = gb10_snapshot();
  add_holder(s, 31337, "python3");
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("1 process holds /dev/nvidia* without an NVML entry"));
  EXPECT_THAT(f.details.back(), HasSubstr("pid 31337 (python3)"));
}

TEST(G6Contention, NothingReadableSkips) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).processes =
      Reading<std::vector<gpu::GpuProcess>>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  s.processes = Reading<sys::ProcessScan>::absent(Why::kNoPermission, "/proc hidepid=2");
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("NVML_ERROR_NOT_SUPPORTED"));
  EXPECT_THAT(f.detail, HasSubstr("hidepid=2"));
}

TEST(G6Contention, ServersStillJudgedWhenNvmlProcessesUnread) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).processes =
      Reading<std::vector<gpu::GpuProcess>>::absent(Why::kError, "NVML_ERROR_UNKNOWN");
  s.processes->servers.push_back({4242, "sglang", "python -m sglang.launch_server"});
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("NVML process list not read"));
}

// Only servers were looked for: that is no PASS (issue 18).
TEST(G6Contention, NoServersWithoutNvmlProcessesIsInfoNotPass) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).processes =
      Reading<std::vector<gpu::GpuProcess>>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  Finding f = run_one("G6", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("no known GPU servers running"));
  EXPECT_THAT(f.detail, HasSubstr("NVML process list not read"));
}

// G7

TEST(G7Nvfp4, Sm121Passes) {
  Finding f = run_one("G7", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("SM121 (12.1) detected"));
  EXPECT_THAT(f.detail, HasSubstr("stay on FP8 unless the build targets sm_121a"));
}

// flashinfer-cubin's cubins are all Sm100-family (field 2026 §5): on GB10 it warns, by version.
TEST(G7Nvfp4, FlashinferCubinOnSm121Warns) {
  // flashinfer-cubin added to the environment the checks judge.
  auto with_cubin = [](Snapshot s) {
    if (!s.python.ok()) return s;
    for (pyenv::PythonEnv& env : *s.python) {
      if (&env == facts::judged_env(*s.python)) {
        env.packages["flashinfer-cubin"] = pyenv::Distribution{"flashinfer-cubin", "0.6.11", ""};
      }
    }
    return s;
  };
  Finding f = run_one("G7", with_cubin(gb10_snapshot()));
  EXPECT_EQ(f.verdict, Verdict::kWarn) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("flashinfer-cubin 0.6.11 is installed"));
  EXPECT_THAT(f.detail, HasSubstr("pip uninstall flashinfer-cubin"));
  // Not GB10's problem on an H200.
  EXPECT_EQ(run_one("G7", with_cubin(h200_snapshot())).verdict, Verdict::kInfo);
}

TEST(G7Nvfp4, H200IsInfo) {
  Finding f = run_one("G7", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_EQ(f.detail,
            "compute capability 9.0 (NVIDIA H200): not SM12x; the NVFP4/sm_121a rule does not "
            "apply");
}

// `check --snapshot h200.json --arch 12.1`: the NVFP4 rule is judged for the GPU asked for.
TEST(G7Nvfp4, ArchJudgesForTheGpuAskedFor) {
  Workload w;
  w.arch = gpu::ComputeCapability{12, 1};
  Finding f = run_one("G7", h200_snapshot(), w);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("SM121 (12.1) asked for with --arch"));
}

TEST(G7Nvfp4, Sm120IsInfo) {
  Snapshot s = h200_snapshot();
  nvml_device(s).compute_capability = gpu::ComputeCapability{12, 0};
  nvml_device(s).name = std::string("NVIDIA RTX PRO 6000 Blackwell");
  Finding f = run_one("G7", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("compute capability 12.0"));
}

TEST(G7Nvfp4, NoGpuSkips) {
  Snapshot s = gb10_snapshot();
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, "libcuda.so.1 not found");
  Finding f = run_one("G7", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("no NVIDIA GPU could be read"));
}

// G8

TEST(G8Playbooks, NoPlaybookSkipsAndListsKnownNames) {
  Finding f = run_one("G8", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("no playbook named (--playbook NAME); known: unsloth, vllm"));
}

TEST(G8Playbooks, UnslothHasOpenIssues) {
  Finding f = run_one("G8", gb10_snapshot(), with_playbook("Unsloth"));
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("#85 (2026-07-17)"));
  EXPECT_THAT(f.detail, HasSubstr("PR #19 (2025-11-05)"));
  EXPECT_THAT(f.detail, HasSubstr("github.com/NVIDIA/dgx-spark-playbooks/issues"));
  EXPECT_THAT(f.detail, Not(HasSubstr("#15 (2025")));  // closed: details only
  EXPECT_EQ(f.details.size(), 4u);
}

TEST(G8Playbooks, AliasesResolve) {
  EXPECT_THAT(run_one("G8", gb10_snapshot(), with_playbook("TRTLLM")).detail,
              HasSubstr("trt-llm: 1 open upstream item: #3 (2025-10-22)"));
  EXPECT_THAT(run_one("G8", gb10_snapshot(), with_playbook("trt_llm")).detail,
              HasSubstr("trt-llm"));
  EXPECT_THAT(run_one("G8", gb10_snapshot(), with_playbook("Two Sparks")).detail,
              HasSubstr("PR #31"));
  EXPECT_THAT(run_one("G8", gb10_snapshot(), with_playbook("nccl")).detail, HasSubstr("#7"));
}

TEST(G8Playbooks, OnlyClosedPasses) {
  Finding f = run_one("G8", gb10_snapshot(), with_playbook("vlm-finetuning"));
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("only closed items"));
}

TEST(G8Playbooks, UnknownNameIsInfo) {
  Finding f = run_one("G8", gb10_snapshot(), with_playbook("comfyui"));
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("'comfyui' is not in the offline table (12 playbooks, checked "
                                  "2026-11-29)"));
}

TEST(G8Playbooks, TableHoldsEveryReferenceRow) {
  std::vector<std::pair<unsigned, bool>> wanted{
      {2, false},  {3, false},  {7, false},  {9, false},  {15, false}, {14, true},
      {19, true},  {22, false}, {31, true},  {38, false}, {46, false}, {50, true},
      {68, false}, {80, false}, {85, false}, {90, true},  {109, false}};
  for (auto [number, pr] : wanted) {
    bool found = false;
    for (const auto& i : playbook_issues()) {
      if (i.number == number && i.pull_request == pr) found = true;
    }
    EXPECT_TRUE(found) << (pr ? "PR " : "#") << number;
  }
  for (const auto& i : playbook_issues()) {
    EXPECT_EQ(i.date.substr(0, 2), "20");
    EXPECT_FALSE(i.gist.empty());
    if (i.playbook != "platform") {
      EXPECT_TRUE(canonical_playbook(i.playbook)) << i.playbook;
    }
  }
}

// G9

TEST(G9Container, NgcContainerPasses) {
  Finding f = run_one("G9", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "running inside a container (docker; NGC PyTorch 25.10)");
}

TEST(G9Container, CgroupV2DockerIsContainer) {
  // The seed's check grepped /proc/1/cgroup for "docker"; under cgroup v2 it reads "0::/"
  // inside Docker, and the container was reported as a bare host.
  Snapshot s = gb10_snapshot();
  s.container = sys::ContainerMarkers{};
  s.container.dockerenv = true;
  s.cgroup = sys::CgroupInfo{2, "/", {"0::/"}, std::string("/"), std::nullopt};
  EXPECT_EQ(run_one("G9", s).verdict, Verdict::kPass);
  s.container = sys::ContainerMarkers{};
  s.container.mountinfo_docker = true;
  EXPECT_EQ(run_one("G9", s).detail, "running inside a container (docker; NGC PyTorch 25.10)");
}

TEST(G9Container, PodmanAndApptainerAndPid1Markers) {
  Snapshot s = h200_snapshot();
  s.container.containerenv = true;
  EXPECT_EQ(run_one("G9", s).detail, "running inside a container (podman)");
  s.container = sys::ContainerMarkers{};
  s.container.singularity = true;
  EXPECT_EQ(run_one("G9", s).detail, "running inside a container (apptainer)");
  s.container = sys::ContainerMarkers{};
  s.container.pid1_container_env = "lxc";
  EXPECT_EQ(run_one("G9", s).detail, "running inside a container (lxc)");
}

TEST(G9Container, OverlayRootAloneIsWeakEvidence) {
  Snapshot s = h200_snapshot();
  s.container.mountinfo_overlay_root = true;
  Finding f = run_one("G9", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("probably inside a container"));
}

TEST(G9Container, NgcVariablesWithoutMarkerAreWeakEvidence) {
  Snapshot s = gb10_snapshot();
  s.container = sys::ContainerMarkers{};
  Finding f = run_one("G9", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("probably inside a container"));
}

TEST(G9Container, PipReplacedNgcTorchWarns) {
  Snapshot s = gb10_snapshot();
  torch_info(s).version = std::string("2.9.1+cu130");
  Finding f = run_one("G9", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("torch 2.9.1+cu130 lacks NGC's build tag"));
}

TEST(G9Container, NgcVllmImageIsNamed) {
  Snapshot s = gb10_snapshot();
  s.env["NVIDIA_PRODUCT_NAME"] = "vLLM";
  s.env["NVIDIA_VLLM_VERSION"] = "25.10";
  EXPECT_EQ(run_one("G9", s).detail, "running inside a container (docker; NGC vLLM 25.10)");
}

TEST(G9Container, BareHostWarns) {
  Finding f = run_one("G9", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.detail, "bare host — prefer an NGC or Unsloth container");
}

TEST(G9Container, BareHostNamesDriftedPairs) {
  Snapshot s = h200_snapshot();
  set_dist(s, "triton", "3.4.0");
  set_dist(s, "unsloth", "2026.3.17");
  set_dist(s, "transformers", "5.2.0");
  Finding f = run_one("G9", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("torch 2.11.0+cu130 expects triton 3.6, found 3.4.0"));
  EXPECT_THAT(f.detail, HasSubstr("unsloth 2026.3.17 expects transformers 5.3.0, found 5.2.0"));
  EXPECT_THAT(f.detail, HasSubstr("2026-11-29"));
}

// G10

TEST(G10Parallelism, SingleNodeIsInfo) {
  Finding f = run_one("G10", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_EQ(f.detail,
            "single node (4 configs scanned): tensor parallelism across Sparks is not in play");
}

TEST(G10Parallelism, TwoNodesWithTpFromConfigFails) {
  Snapshot s = gb10_snapshot();
  s.env["SLURM_NNODES"] = "2";
  s.parallel_configs->hits.push_back({"serve.yaml", 3, "tensor_parallel_size", "2"});
  Finding f = run_one("G10", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("2 nodes (SLURM_NNODES=2) with tensor parallelism 2"));
  EXPECT_THAT(f.detail, HasSubstr("serve.yaml:3"));
  EXPECT_THAT(f.detail, HasSubstr("use DDP or FSDP across Sparks"));
}

TEST(G10Parallelism, TwoNodesWithoutTpPasses) {
  Snapshot s = gb10_snapshot();
  s.env["NNODES"] = "2";
  Finding f = run_one("G10", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("no tensor parallelism"));
}

TEST(G10Parallelism, WorldOverLocalWorldCountsNodes) {
  Snapshot s = gb10_snapshot();
  s.env["WORLD_SIZE"] = "2";
  s.env["LOCAL_WORLD_SIZE"] = "1";
  Finding f = run_one("G10", s, with_command("vllm serve m --tensor-parallel-size 2"));
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("--tensor-parallel-size 2 in the command"));
}

TEST(G10Parallelism, CommandNodesAndTpSpellings) {
  Snapshot s = gb10_snapshot();
  for (const char* cmd :
       {"torchrun --nnodes=2 train.py tp_size=2", "torchrun --nnodes 1:2 train.py --tp 2",
        "torchrun --nnodes 2 train.py ++trainer.tensor_model_parallel_size=2",
        "torchrun --nnodes 2 -m vllm -tp 2", "python -c \"LLM(tensor_parallel_size=2)\" --nnodes 2",
        "torchrun --nnodes 2 x.py --tp-size=4"}) {
    EXPECT_EQ(run_one("G10", s, with_command(cmd)).verdict, Verdict::kFail) << cmd;
  }
}

TEST(G10Parallelism, AccelerateNumMachinesCounts) {
  Snapshot s = gb10_snapshot();
  sys::AccelerateConfig c;
  c.path = "/root/.cache/huggingface/accelerate/default_config.yaml";
  c.distributed_type = "MULTI_GPU";
  c.num_machines = 2;
  s.accelerate_config = c;
  EXPECT_EQ(run_one("G10", s).verdict, Verdict::kPass);
}

TEST(G10Parallelism, SingleNodeTpIsFineAndMentioned) {
  Snapshot s = h200_snapshot();
  s.gpu.nvml->devices.resize(8, s.gpu.nvml->devices.front());  // an 8-GPU H200 host
  Finding f = run_one("G10", s, with_command("vllm serve m --tp 2"));
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("tensor parallelism 2 found"));
  EXPECT_THAT(f.detail, HasSubstr("fine inside one node"));
}

TEST(G10Parallelism, TpAboveTheGpusOfOneSparkSpansSparks) {
  Finding f = run_one("G10", gb10_snapshot(), with_command("vllm serve m --tp 2"));
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("2 nodes (tensor parallelism 2 over this node's 1 GPU)"));
}

TEST(G10Parallelism, TheDetailsNameTheLinksThatAreUp) {
  Snapshot s = gb10_snapshot();
  s.env["NNODES"] = "2";
  s.network = testing::paired_spark_network();
  Finding f = run_one("G10", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.details, ::testing::Contains(HasSubstr(
                             "RDMA links up (cabled to another node): roceP2p1s0f0 at 200 Gb/s, "
                             "rocep1s0f0 at 200 Gb/s")));
  for (auto& d : s.network->rdma) d.ports[0].state = "1: DOWN";
  EXPECT_THAT(run_one("G10", s).details, ::testing::Contains(HasSubstr("no RDMA link is up")));
}

TEST(G10Parallelism, TpOfOneIsNoTp) {
  Snapshot s = gb10_snapshot();
  s.env["NNODES"] = "2";
  s.parallel_configs->hits.push_back({"cfg.yaml", 9, "tp_size", "1"});
  s.parallel_configs->hits.push_back({"cfg.yaml", 10, "tp_size", "${TP}"});
  EXPECT_EQ(run_one("G10", s).verdict, Verdict::kPass);
}

TEST(G10Parallelism, UnscannedConfigsAreSaid) {
  Snapshot s = h200_snapshot();
  s.parallel_configs = Reading<sys::ParallelConfigScan>::absent(Why::kAbsent, "no --config-dir");
  Finding f = run_one("G10", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("configs not scanned: absent: no --config-dir"));
  EXPECT_THAT(f.detail, HasSubstr("across nodes"));
}

}  // namespace
}  // namespace sparkdoc::checks

namespace sparkdoc::checks {
namespace {

// The GPU machine runs an NGC CUDA base image (NVIDIA_PRODUCT_NAME=CUDA, no
// NVIDIA_PYTORCH_VERSION) with torch installed by pip: that is not a replaced NGC torch.
TEST(G9Container, CudaBaseImageWithPipTorchIsNotAReplacedNgcTorch) {
  Snapshot s = testing::gb10_snapshot();
  s.env.erase("NVIDIA_PYTORCH_VERSION");
  s.env["NVIDIA_PRODUCT_NAME"] = "CUDA";
  s.python->front().torch->version = std::string("2.11.0+cu130");
  s.python->front().packages["torch"].version = "2.11.0+cu130";
  Finding f = testing::run_one("G9", s);
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, ::testing::HasSubstr("running inside a container"));
}

}  // namespace
}  // namespace sparkdoc::checks
