// The check table: every check's ID, its knowledge text (what `explain` prints) and its
// function, in the order reports list them. IDs and meanings are public and permanent: add
// rows, never renumber or reuse one.
#include <algorithm>
#include <array>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "checks/check_fns.h"
#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/platform.h"

namespace sparkdoc::checks {
namespace {

constexpr std::array<CheckInfo, 19> kChecks{{
    {"G1", "CUDA 12/13 ABI mismatch",
     "Python environments: torch's version, torch.version.cuda, the CUDA sonames torch's "
     "libraries need and where they resolve, nvidia-*-cuNN distributions; the driver's CUDA "
     "version from NVML or the CUDA driver API",
     "ImportError naming an undefined CUDA symbol, \"libcudart.so.12: cannot open shared object "
     "file\", or a segfault at the first .cuda() call",
     "Most PyPI wheels are built against CUDA 12 (libcudart.so.12) while DGX Spark ships CUDA "
     "13. pip never compares CUDA ABIs, so the mismatch surfaces only at import or at the first "
     "kernel launch. A CPU-only torch (+cpu) pulled in by another package fails the same way.",
     "Takes torch from the first Python environment that has it; compares its CUDA major with "
     "the driver's and, on a Spark, with 13; checks that every CUDA library torch needs "
     "resolves and belongs to torch's CUDA major; looks for nvidia-*-cu12 wheels beside a CUDA "
     "13 torch.",
     "Reinstall torch from https://download.pytorch.org/whl/cu130 (pip install torch "
     "--index-url https://download.pytorch.org/whl/cu130) or work in a matched container such "
     "as NGC PyTorch; remove stray nvidia-*-cu12 wheels.",
     "002 G1",
     "undefined symbol importerror segfault libcudart cudart so.12 so.13 cu130 cu128 cu12 cu13 "
     "wheel abi cpu build torch.version.cuda driver mismatch cannot open shared object import "
     "error",
     &check_g1_cuda_abi},
    {"G2", "flash-attn: skip the pip build, watch Unsloth's auto-detect",
     "Python environment: the flash-attn and unsloth distributions; container markers and NGC "
     "image variables; the platform",
     "pip install flash-attn fails or hangs compiling on a Spark; or Unsloth trains with "
     "flash-attn although attn_implementation=\"sdpa\" was asked for",
     "No prebuilt flash-attn wheel covers aarch64 with sm_121, so bare pip compiles it from "
     "source. NGC containers ship a working SM121 build, and Unsloth prefers flash-attn whenever "
     "it can import it, silently overriding an SDPA request.",
     "Looks for flash-attn in torch's environment and for unsloth beside it, and tells an NGC "
     "image from a bare pip environment.",
     "On bare pip, leave flash-attn out: SDPA is the default and works. With Unsloth, force "
     "SDPA by setting its HAS_FLASH_ATTENTION flag to False before loading, or uninstall "
     "flash-attn.",
     "002 G2",
     "flash-attn flash_attn flashattention sdpa attention attn_implementation unsloth build "
     "hangs compile wheel backend wrong",
     &check_g2_flash_attn},
    {"G3", "UMA OOM below 128 GB",
     "/proc/meminfo (MemAvailable, MemFree, SwapFree, Cached, Buffers, Shmem, Dirty, Writeback, "
     "HugePages); NVML per-process GPU memory; on discrete GPUs NVML free memory; --need",
     "Out of memory while loading or training although nvidia-smi shows free memory, or shows "
     "\"Not Supported\" / [N/A] for memory; a load dies part way through the shards, or the box "
     "freezes",
     "On GB10 the GPU allocates from the same LPDDR5x as the CPU. During a load the page cache "
     "of mmap'd safetensors and the CUDA tensors made from them both count against that one "
     "pool, and the driver's allocations fail before MemAvailable reaches zero. nvidia-smi and "
     "cudaMemGetInfo do not show any of this.",
     "Applies NVIDIA's unified-memory rule: free hugepages when configured, else MemAvailable "
     "+ SwapFree, minus an 8 GiB floor. Compares that with --need, and warns when the need fits "
     "only by evicting page cache in the middle of the load.",
     "Drop the page cache before a load (sync; echo 3 > /proc/sys/vm/drop_caches, or sparkdoc "
     "clean), stop other GPU users, load with low_cpu_mem_usage=True or a loader that releases "
     "each shard's pages, and plan from /proc/meminfo rather than nvidia-smi.",
     "002 G3",
     "oom out of memory cuda nvidia-smi free memory n/a not supported page cache meminfo "
     "memavailable unified uma mmap safetensors load drop_caches headroom killed freeze 128gb",
     &check_g3_uma_headroom},
    {"G4", "Thermal throttling and the ~100 W sustained power cap",
     "NVML per device: temperature, power draw and limit, SM clock and its maximum, "
     "utilization, clock-event reasons and the cumulative slowdown counters",
     "Throughput drops partway through a multi-hour run, clocks fall, or the box reboots or "
     "powers off under sustained load",
     "GB10 sustains about 100 W in practice against a 140 W SoC TDP (240 W is the power "
     "brick's rating), so long runs sit at the power cap and heat up; a degraded USB-PD power "
     "state can also hold clocks under 1 GHz.",
     "Reads temperature, power, SM clock, the active clock-event reasons and the time spent "
     "power- or heat-capped since driver load; warns on active thermal or HW slowdown, on 90 C "
     "and above, and on high utilization at an SM clock under 1000 MHz.",
     "Plan for ~100 W sustained; improve airflow or cap clocks (nvidia-smi -lgc 0,2100); for a "
     "stuck low-clock state, power-cycle fully (unplug the brick from the wall, wait 60 s); "
     "watch long runs with sparkdoc watch.",
     "002 G4",
     "throttle throttling thermal temperature hot heat power watts slow slows slowdown partway "
     "mid-run throughput drop reboot reboots shutdown clocks 100w 240w tdp degraded",
     &check_g4_thermal_power},
    {"G5", "Bandwidth ceiling: budget 180-192 GB/s",
     "a saved bandwidth measurement (sparkdoc bw)",
     "Memory-bound work (decode-heavy RL loops, inference) plateaus well below the throughput a "
     "plan promised",
     "273 GB/s is the LPDDR5x spec ceiling; sustained copies measure 180-192 GB/s, so a plan "
     "built on 273 GB/s overpromises by about a third.",
     "Compares a measured device copy bandwidth (read + write bytes counted) with 180 GB/s, the "
     "bottom of the budget.",
     "Budget throughput from 180-192 GB/s and revise plans built on 273 GB/s; measure with "
     "sparkdoc bw on an idle machine.",
     "002 G5",
     "bandwidth memory-bound bound decode tokens per second gb/s 273 plateau step time rl "
     "inference roofline",
     &check_g5_bandwidth},
    {"G6", "Global UMA resource contention",
     "NVML process lists with per-process memory; processes holding /dev/nvidia*; known GPU "
     "servers by command line (vLLM, SGLang, Ollama, llama-server, Triton)",
     "A run's KV cache or weights are evicted mid-run with no OOM in its own log, or it slows "
     "or dies while another server is busy",
     "Unified memory is one pool for the whole machine: an uncapped or near-capacity process "
     "competes with everything else in it. A small, bounded job (a LoRA under 4 GB) next to a "
     "capped server is fine.",
     "Lists every GPU process and known server; warns on servers without a memory cap (vLLM "
     "--gpu-memory-utilization 0.5 or less) and on any process holding more than 4 GB.",
     "One heavy job at a time: stop unrelated servers, or restart them capped (vLLM "
     "--gpu-memory-utilization 0.5 or less), before a long run.",
     "002 G6",
     "contention evicted eviction another process server vllm ollama sglang utilization kv "
     "cache shared other processes competing silently",
     &check_g6_contention},
    {"G7", "NVFP4 slower than FP8 on SM121",
     "the GPU's compute capability (NVML or CUDA)",
     "Switching inference from FP8 to NVFP4 makes it slower, not faster",
     "SM121 has the fast FP4 conversion instructions only in code compiled for sm_121a (or the "
     "sm_120f/121f family targets); generic builds fall back and run about 32% slower than "
     "FP8.",
     "Reads the compute capability; on 12.1 states which code NVFP4 kernels need (sparkdoc "
     "audit inspects the libraries themselves).",
     "Stay on FP8 unless the kernels are built for sm_121a.",
     "002 G7",
     "nvfp4 fp4 fp8 slower quantization quantized sm121 sm_121a sm120 blackwell cutlass "
     "flashinfer precision",
     &check_g7_nvfp4},
    {"G8", "Stale official playbooks",
     "--playbook NAME and an offline, dated table of NVIDIA/dgx-spark-playbooks issues",
     "Following an official DGX Spark playbook fails with no local misconfiguration to explain "
     "it",
     "The playbooks have shipped broken before and the stack moves faster than the docs: wrong "
     "image tags, missing packages, pins that no longer install.",
     "Looks the playbook up in a dated offline table of known open and closed issues.",
     "Read github.com/NVIDIA/dgx-spark-playbooks/issues for that playbook before an expensive "
     "run, and apply the workarounds listed there.",
     "002 G8",
     "playbook recipe official instructions docs tutorial guide broken fails outright "
     "dgx-spark-playbooks issue",
     &check_g8_playbooks},
    {"G9", "Container first, not bare pip",
     "container markers (/.dockerenv, /run/.containerenv, /.singularity.d, PID 1's container=, "
     "mountinfo), NGC image variables, torch/triton/transformers/unsloth versions",
     "A bare pip environment that worked yesterday breaks after an unrelated pip install, or "
     "two identical-looking environments behave differently",
     "Bare pip lets torch, Triton, xformers and transformers drift apart and nothing pins them "
     "to SM121; inside an NGC image, a pip install can replace the image's own torch build.",
     "Decides container or bare host from marker files and mounts (never from /proc/1/cgroup, "
     "which reads 0::/ inside Docker under cgroup v2), names the NGC image, checks NGC's torch "
     "is still the image's, and on a bare host compares version pairs with a dated known-good "
     "matrix.",
     "Work in an NGC PyTorch container or Unsloth's DGX Spark image; if bare pip is "
     "unavoidable, follow NVIDIA's install order and pin versions; never pip install a torch "
     "over an NGC image's.",
     "002 G9",
     "container docker bare pip environment broke breaks after install drift triton xformers "
     "transformers ngc image reproducible venv",
     &check_g9_container},
    {"G10", "Dual-Spark is DDP/FSDP only",
     "node count from NNODES, SLURM_NNODES, WORLD_SIZE/LOCAL_WORLD_SIZE, accelerate "
     "num_machines and --nnodes; tensor-parallel settings in configs under the working "
     "directory and in --cmd",
     "A tensor-parallel launch across two Sparks hangs, runs far slower than one Spark, or "
     "errors out",
     "The ConnectX-7 link between Sparks carries DDP/FSDP gradient and parameter sync well, but "
     "tensor parallelism exchanges activations inside every layer and the link is too thin "
     "for that.",
     "Counts nodes from the launch environment and the command, finds tensor-parallel degrees "
     "in configs and the command, and fails TP > 1 across more than one node.",
     "Across two Sparks use DDP or FSDP; keep tensor parallelism inside one node.",
     "002 G10",
     "two sparks dual spark multi-node multinode tensor parallel parallelism tp hang hangs slow "
     "connectx nccl ddp fsdp cluster stacked",
     &check_g10_parallelism},
    {"S1", "Distributed-launch leftovers in the environment",
     "WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, NCCL_*, OMPI_*, "
     "MPI_*, PMI_* from the environment; the node count",
     "A single-GPU training script hangs at start-up waiting for other ranks, or tries to "
     "initialise NCCL or MPI",
     "Variables left from an earlier distributed set-up make accelerate, DeepSpeed, FSDP and "
     "torch.distributed start a multi-process run on a one-GPU Spark.",
     "Lists the rank, rendezvous, NCCL and MPI variables that are set when the run is "
     "single-node.",
     "Unset them (WORLD_SIZE RANK LOCAL_RANK MASTER_ADDR MASTER_PORT and NCCL_*/OMPI_*/MPI_*), "
     "or launch with sparkdoc run, which starts the command without them.",
     "001",
     "world_size rank local_rank master_addr master_port nccl mpi ompi pmi environment "
     "variables hang init_process_group distributed single gpu rendezvous",
     &check_s1_distributed_env},
    {"S2", "accelerate's cached default config",
     "~/.cache/huggingface/accelerate/default_config.yaml (distributed_type, fsdp/deepspeed "
     "sections); ACCELERATE_USE_FSDP, ACCELERATE_USE_DEEPSPEED",
     "accelerate or the Trainer starts FSDP or DeepSpeed on one GPU, or fails distributed-mode "
     "checks, with no distributed variables set",
     "accelerate reads the default config an earlier `accelerate config` cached and applies "
     "its distributed_type by itself.",
     "Reads the cached config; warns when it asks for a distributed mode and the "
     "ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED overrides are not both 0.",
     "export ACCELERATE_USE_FSDP=0 ACCELERATE_USE_DEEPSPEED=0 (sparkdoc run does), or delete "
     "the cached config.",
     "001",
     "accelerate config default_config.yaml fsdp deepspeed distributed_type multi_gpu cached "
     "trainer",
     &check_s2_accelerate_config},
    {"S3", "PYTORCH_CUDA_ALLOC_CONF expandable segments",
     "PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF); the platform",
     "A large allocation fails with out of memory although enough is free in total; reserved "
     "but unallocated memory keeps growing",
     "The caching allocator reserves fixed segments that fragment near the unified-memory "
     "ceiling; expandable segments grow in place instead, and max_split_size_mb:512 keeps large "
     "cached blocks whole.",
     "Parses the allocator settings for expandable_segments:True (and max_split_size_mb).",
     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
     "000 §4, 001",
     "fragmentation fragmented allocator expandable_segments max_split_size_mb "
     "pytorch_cuda_alloc_conf reserved large allocation",
     &check_s3_alloc_conf},
    {"S4", "TOKENIZERS_PARALLELISM",
     "TOKENIZERS_PARALLELISM",
     "dataset.map(num_proc>1) or DataLoader workers hang forever after a warning that the "
     "process was forked after parallelism was used",
     "The Rust tokenizers thread pool does not survive fork(); forked workers deadlock on its "
     "locks.",
     "Reads TOKENIZERS_PARALLELISM.",
     "export TOKENIZERS_PARALLELISM=false, and use dataset.map(num_proc=1).",
     "001",
     "tokenizers parallelism fork forked deadlock dataset map num_proc hang dataloader workers",
     &check_s4_tokenizers_parallelism},
    {"S5", "Container ulimits and shared memory",
     "RLIMIT_MEMLOCK, RLIMIT_STACK and the size of /dev/shm; container markers",
     "Inside a container, pinned-memory allocations fail, DataLoader workers die with bus "
     "errors or shared-memory errors, or deep recursion crashes",
     "Docker's defaults are a small locked-memory limit, an 8 MiB stack and a 64 MB /dev/shm; "
     "CUDA pinned memory, worker processes and NCCL need more.",
     "Inside a container, reads the memlock and stack limits and the /dev/shm size.",
     "docker run --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 (on GB10 with "
     "--privileged -e NVIDIA_VISIBLE_DEVICES=all rather than --gpus all).",
     "000 §1",
     "ulimit memlock stack shm /dev/shm ipc bus error pinned memory docker run flags shared "
     "dataloader",
     &check_s5_container_limits},
    {"S6", "vm tunables left from a load window",
     "/proc/sys/vm/min_free_kbytes, vfs_cache_pressure and swappiness",
     "Long after a model load, the machine keeps 1 GB free and evicts file cache aggressively "
     "for every job",
     "000's load procedure sets min_free_kbytes=1048576 and vfs_cache_pressure=500 for the load "
     "window and is meant to put them back afterwards.",
     "Compares min_free_kbytes with the load-window value and vfs_cache_pressure with the "
     "default 100.",
     "Restore vfs_cache_pressure=100 and min_free_kbytes to its boot value (sparkdoc clean "
     "--restore).",
     "000 §6",
     "min_free_kbytes vfs_cache_pressure sysctl vm tunables page cache eviction restore",
     &check_s6_vm_tunables},
    {"S7", "gnome-remote-desktop holds GPU memory",
     "the process scan (/dev/nvidia* holders, known servers); NVML per-process memory",
     "About 6 GB of the shared pool is gone before the run starts; a load that should fit runs "
     "out of memory near the end",
     "gnome-remote-desktop keeps a CUDA context for as long as it runs, and on unified memory "
     "that comes out of the same pool as the training run.",
     "Looks for gnome-remote-desktop among the GPU holders and known servers.",
     "systemctl --user stop gnome-remote-desktop.service before a load.",
     "000 §6",
     "gnome remote desktop grd rdp vnc cuda context 6gb desktop session",
     &check_s7_remote_desktop},
    {"S8", "transformers version for Nemotron-H",
     "transformers' version in torch's environment; --cmd for trust_remote_code",
     "Nemotron-H produces wrong output or fails in its KV cache; qwen3_5_moe is not recognised",
     "transformers before 5.5.3 has no native NemotronHForCausalLM with the KV-cache fix, "
     "trust_remote_code=True loads the model repository's own code with the old broken cache, "
     "and 4.x does not know qwen3_5_moe.",
     "Compares the installed transformers with 5.5.3 and looks for trust_remote_code in the "
     "command.",
     "Pin transformers==5.5.3 or newer for Nemotron-H and drop trust_remote_code=True; with "
     "Unsloth, use the transformers release that Unsloth version pins.",
     "000 §2-§3",
     "transformers nemotron nemotron-h nemotronh trust_remote_code remote code kv cache "
     "qwen3_5_moe version wrong output architecture not recognized",
     &check_s8_transformers},
    {"S9", "Native extensions run on this GPU",
     "the native-code audit of torch's environment: each shared object's SASS and PTX targets "
     "against the GPU's compute capability, and the rules for causal-conv1d, mamba-ssm, "
     "bitsandbytes, xformers and vllm",
     "\"no kernel image is available for execution on the device\", \"ImportError: "
     "selective_scan_cuda\", bitsandbytes falling back to CPU, or a first step that stalls "
     "for minutes while the driver JIT-compiles PTX",
     "Wheels built before Blackwell carry kernels for sm_80/sm_90 only, and a source build "
     "inside docker build sees no GPU: mamba-ssm then skips selective_scan_cuda silently and "
     "causal-conv1d builds without sm_120/sm_121. pip checks none of this.",
     "Reads the fatbin headers of every shared object (sparkdoc audit) and judges each "
     "package's code for the GPU's compute capability: SASS that runs, PTX that the driver "
     "must JIT, or nothing; then applies the known packages' rules. flash-attn is G2's, "
     "libraries G1's.",
     "Rebuild the named package with TORCH_CUDA_ARCH_LIST including the GPU (\"12.0;12.1+PTX\" "
     "on a Spark; 12.1a for NVFP4), with CAUSAL_CONV1D_FORCE_BUILD=TRUE or a visible GPU for "
     "mamba-ssm; build bitsandbytes with -DCOMPUTE_CAPABILITY including 121; run sparkdoc "
     "audit for the full list.",
     "000 §2",
     "no kernel image available device sm_121 sm_120 blackwell mamba mamba-ssm selective_scan "
     "causal-conv1d causal_conv1d bitsandbytes xformers vllm extension arch list ptx jit "
     "torch_cuda_arch_list audit",
     &check_s9_native_extensions},
}};

bool wanted(std::string_view id, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  std::string lower = to_lower(id);
  return std::any_of(only.begin(), only.end(),
                     [&](const std::string& o) { return to_lower(trim(o)) == lower; });
}

}  // namespace

std::span<const CheckInfo> all_checks() { return kChecks; }

const CheckInfo* find_check(std::string_view id) {
  std::string lower = to_lower(trim(id));
  for (const auto& c : kChecks) {
    if (to_lower(c.id) == lower) return &c;
  }
  return nullptr;
}

std::vector<Finding> run_checks(const Snapshot& snapshot, const Workload& workload,
                                const std::vector<std::string>& only) {
  return run_checks(all_checks(), snapshot, workload, only);
}

std::vector<Finding> run_checks(std::span<const CheckInfo> table, const Snapshot& snapshot,
                                const Workload& workload, const std::vector<std::string>& only) {
  facts::Platform platform;
  try {
    platform = facts::classify_platform(snapshot);
  } catch (const std::exception& e) {
    platform.key = "no-gpu";
    platform.evidence.push_back(std::string("platform not classified: ") + e.what());
  } catch (...) {
    platform.key = "no-gpu";
    platform.evidence.push_back("platform not classified: unknown error");
  }
  std::vector<Finding> out;
  for (const auto& info : table) {
    if (!wanted(info.id, only)) continue;
    Finding f;
    try {
      if (!info.run) throw std::logic_error("no function in the check table");
      f = info.run(snapshot, workload, platform);
    } catch (const std::exception& e) {
      f = make_finding(info.id, Verdict::kFail,
                       fmt::format("internal error in check: {} (please report it with the "
                                   "output of sparkdoc snapshot)",
                                   e.what()));
    } catch (...) {
      f = make_finding(info.id, Verdict::kFail,
                       "internal error in check: unknown exception (please report it with the "
                       "output of sparkdoc snapshot)");
    }
    f.id = std::string(info.id);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace sparkdoc::checks
