#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/snapshot_file.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "plan/locate.h"
#include "plan/plan.h"

namespace sparkdoc::cli {
namespace {

struct PlanFlags {
  std::string model;
  bool full = false;
  uint64_t lora = 0;
  uint64_t qlora = 0;
  double alpha = 0;
  std::string targets;
  bool experts = false;
  std::string framework = "peft";
  std::string optim = "adamw";
  uint64_t seq = 2048;
  uint64_t batch = 1;
  bool grad_ckpt = false;
  std::string loader = "mmap";
  std::string dtype;
  std::string snapshot_file;
  std::string available;
  std::string cuda_context;
  std::string attention = "sdpa";
  uint64_t samples = 0;
  uint64_t epochs = 1;
  uint64_t grad_accum = 1;
  uint64_t steps = 0;
  double tflops = 0;
  double bandwidth = 0;
  bool no_memory = false;
  bool strict_size = false;
  bool json = false;
  bool timing = false;
};

// The machine planned for: its available memory (--available, a recorded snapshot, or this
// machine by G3's headroom rule) and, when a machine was read, its platform.
struct Machine {
  std::optional<plan::Available> available;
  std::optional<facts::Platform> platform;
  std::optional<double> measured_bandwidth_gbs;  // `sparkdoc bw`'s device copy, when recorded
};

std::optional<plan::Available> available_memory(const PlanFlags& flags, Machine& machine,
                                                std::string& error) {
  if (!flags.available.empty()) {
    auto bytes = parse_memory_size(flags.available);
    if (!bytes) {
      error = "--available: " + bytes.error().message;
      return std::nullopt;
    }
    return plan::Available{*bytes, "--available"};
  }
  Snapshot s;
  std::string source = "live";
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) {
      error = loaded.error().message;
      return std::nullopt;
    }
    s = std::move(*loaded);
    source = "snapshot " + file_label(flags.snapshot_file);
  } else {
    CaptureOptions options;
    options.config_dir = "";
    options.audit_native = false;  // the headroom only
    options.cuda_devices_always = false;
    s = capture(options);
  }
  machine.platform = facts::classify_platform(s);
  if (const auto* bw = s.bandwidth.get(); bw && bw->device_copy_gbps > 0) {
    machine.measured_bandwidth_gbs = bw->device_copy_gbps;
  }
  auto h = facts::compute_headroom(s, *machine.platform);
  if (!h) return std::nullopt;
  return plan::Available{h->bytes > 0 ? static_cast<uint64_t>(h->bytes) : 0,
                         fmt::format("{}: {}", source, h->rule)};
}

// The CUDA context's bytes and where they come from: --cuda-context, else by the platform read
// (a new context takes ~8 GB of GB10's unified pool, 000 §6 and §10; ~1 GiB on the H200), else
// GB10's figure, since a Spark is what is planned for.
std::string set_cuda_context(const PlanFlags& flags, const Machine& machine,
                             plan::PlanRequest& req) {
  const plan::Constants k = plan::default_constants();
  if (!flags.cuda_context.empty()) {
    auto bytes = parse_memory_size(flags.cuda_context);
    if (!bytes) return "--cuda-context: " + bytes.error().message;
    req.setup.cuda_context_bytes = *bytes;
    req.cuda_context_source = "--cuda-context";
  } else if (machine.platform && !machine.platform->unified_memory()) {
    req.setup.cuda_context_bytes = k.cuda_context_bytes;
    req.cuda_context_source = "discrete GPU: torch's context as measured on the H200";
  } else {
    req.setup.cuda_context_bytes = k.gb10_cuda_context_bytes;
    req.cuda_context_source =
        machine.platform ? "unified memory: ~8 GB for a new CUDA context on GB10 (000 §6, §10)"
                         : "no machine read: GB10's ~8 GB for a new CUDA context (000 §6, §10); "
                           "--cuda-context sets it";
  }
  return "";
}

// The GPU the time is estimated for: GB10's measured figures on a Spark or when no machine is
// read, the H200's on an H200; a recorded `sparkdoc bw` replaces the bandwidth; --tflops and
// --bandwidth replace either. Another GPU without --tflops gets no estimate.
std::optional<plan::Hardware> hardware_for(const PlanFlags& flags, const Machine& machine) {
  std::optional<plan::Hardware> hw;
  if (!machine.platform || machine.platform->unified_memory()) {
    hw = plan::gb10_hardware();
  } else if (machine.platform->gpu_name.find("H200") != std::string::npos) {
    hw = plan::h200_hardware();
  } else {
    hw = plan::Hardware{machine.platform->gpu_name, 0, "", 0, ""};
  }
  if (machine.measured_bandwidth_gbs) {
    hw->bandwidth_gbs = *machine.measured_bandwidth_gbs;
    hw->bandwidth_source = "`sparkdoc bw` in the snapshot";
  }
  if (flags.tflops > 0) {
    hw->gemm_tflops = flags.tflops;
    hw->gemm_source = "--tflops";
  }
  if (flags.bandwidth > 0) {
    hw->bandwidth_gbs = flags.bandwidth;
    hw->bandwidth_source = "--bandwidth";
  }
  if (hw->gemm_tflops <= 0 || hw->bandwidth_gbs <= 0) return std::nullopt;
  return hw;
}

int run_plan(const PlanFlags& flags) {
  const char* me = "sparkdoc plan";
  int methods = (flags.full ? 1 : 0) + (flags.lora ? 1 : 0) + (flags.qlora ? 1 : 0);
  if (methods > 1) {
    std::cerr << me << ": choose one of --full, --lora R, --qlora R\n";
    return kExitUsage;
  }
  plan::PlanRequest req;
  req.training = flags.full ? plan::Training::kFull
                 : flags.qlora ? plan::Training::kQlora
                               : plan::Training::kLora;
  req.lora.rank = flags.qlora ? flags.qlora : (flags.lora ? flags.lora : 16);
  if (flags.alpha > 0) req.alpha = flags.alpha;
  if (flags.targets == "all-linear") {
    req.lora.all_linear = true;
  } else if (!flags.targets.empty()) {
    for (auto t : split(flags.targets, ',')) {
      auto name = trim(t);
      if (!name.empty()) req.lora.targets.emplace_back(name);
    }
  }
  req.lora.experts = flags.experts;
  if (flags.framework == "peft") req.lora.framework = plan::Framework::kPeft;
  else if (flags.framework == "unsloth") req.lora.framework = plan::Framework::kUnsloth;
  else {
    std::cerr << me << ": --framework: peft or unsloth\n";
    return kExitUsage;
  }
  auto optim = plan::parse_optimizer(flags.optim);
  if (!optim) {
    std::cerr << me << ": --optim: adamw, adamw_8bit, paged_adamw_8bit, sgd or adafactor\n";
    return kExitUsage;
  }
  req.setup.optimizer = *optim;
  if (flags.seq == 0 || flags.batch == 0) {
    std::cerr << me << ": --seq and --batch must be at least 1\n";
    return kExitUsage;
  }
  req.setup.seq = flags.seq;
  req.setup.batch = flags.batch;
  req.setup.grad_ckpt = flags.grad_ckpt;
  if (flags.loader != "mmap" && flags.loader != "sparkdoc") {
    std::cerr << me << ": --loader: mmap or sparkdoc\n";
    return kExitUsage;
  }
  req.setup.loader = flags.loader == "mmap" ? plan::LoadMethod::kMmap : plan::LoadMethod::kSparkdoc;
  if (flags.attention != "sdpa" && flags.attention != "eager") {
    std::cerr << me << ": --attention: sdpa or eager\n";
    return kExitUsage;
  }
  req.setup.attention =
      flags.attention == "sdpa" ? plan::Attention::kSdpa : plan::Attention::kEager;
  req.dtype_override = flags.dtype;

  // The machine first: its platform sets the CUDA context the budget counts.
  Machine machine;
  if (!flags.no_memory) {
    std::string error;
    machine.available = available_memory(flags, machine, error);
    if (!error.empty()) {
      std::cerr << me << ": " << error << "\n";
      return kExitUsage;
    }
  }
  if (auto error = set_cuda_context(flags, machine, req); !error.empty()) {
    std::cerr << me << ": " << error << "\n";
    return kExitUsage;
  }
  req.hardware = hardware_for(flags, machine);
  req.run = {flags.samples, flags.epochs, flags.grad_accum, flags.steps};

  auto t0 = std::chrono::steady_clock::now();
  std::string path = plan::locate_model(flags.model, plan::hub_cache_roots());
  safetensors::HeaderOptions options{flags.strict_size ? safetensors::SizeCheck::kExact
                                                       : safetensors::SizeCheck::kHeaderOnly};
  auto p = plan::plan_model(path, options, req);
  if (!p) {
    std::cerr << me << ": " << p.error().message << "\n";
    return kExitUsage;
  }
  auto t1 = std::chrono::steady_clock::now();
  if (machine.available) plan::judge_fit(*p, *machine.available);
  double plan_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (flags.json) {
    nlohmann::json j = plan::render_plan_json(*p);
    if (flags.timing) j["timing_ms"] = plan_ms;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << plan::render_plan_text(*p);
    if (flags.timing) std::cout << fmt::format("timing: headers and plan in {:.1f} ms\n", plan_ms);
  }
  std::cout.flush();
  if (p->fit.known && !p->fit.fits) return kExitBlocked;
  return kExitReady;
}

}  // namespace

std::function<int()> add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Will this model and training method fit? Reads only the safetensors headers and "
      "config.json of MODEL (a folder, a shard, an index, a Hugging Face cache entry or org/name "
      "in the cache), counts parameters exactly as PEFT's get_nb_trainable_parameters() (or "
      "Unsloth) reports them, and budgets weights, adapters, gradients, optimizer states, "
      "activations and the load-time peak against the memory available (this machine, a "
      "snapshot, or --available). Training and the load must both fit. Exit 0 fits (or no memory "
      "figure), 1 does not fit (training or the load), 2 usage.\n"
      "Examples:\n"
      "  sparkdoc plan ~/models/Qwen3.5-35B-A3B --lora 32 --experts --optim adamw_8bit \\\n"
      "      --seq 2048 --batch 2 --grad-ckpt\n"
      "  sparkdoc plan nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 --lora 32 --framework unsloth "
      "\\\n"
      "      --targets q_proj,k_proj,v_proj,o_proj,in_proj,out_proj,up_proj,down_proj\n"
      "  sparkdoc plan MODEL --full --snapshot spark.json --json");
  cmd->add_option("model", flags->model, "Model folder, .safetensors file, index, cache entry")
      ->required()
      ->type_name("MODEL");
  cmd->add_flag("--full", flags->full, "Full fine-tuning: every parameter trainable");
  // Bounds far above any real run, so that no product of them wraps 64 bits and a 0 is not read
  // as "not given".
  cmd->add_option("--lora", flags->lora, "LoRA of rank R (the default, with R=16)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}))
      ->type_name("R");
  cmd->add_option("--qlora", flags->qlora,
                  "QLoRA of rank R: NF4 base (bitsandbytes, double "
                  "quantisation), LoRA adapters in fp32")
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}))
      ->type_name("R");
  cmd->add_option("--alpha", flags->alpha, "lora_alpha (shown; it does not change memory)")
      ->type_name("A");
  cmd->add_option("--targets", flags->targets,
                  "Module names, comma-separated (PEFT's suffix match), or all-linear; default "
                  "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
      ->type_name("LIST");
  cmd->add_flag("--experts", flags->experts,
                "Also adapt the routed experts' 3-D parameters (PEFT target_parameters); "
                "Unsloth adds them whenever gate/up/down are targeted");
  cmd->add_option("--framework", flags->framework, "peft (default) or unsloth")
      ->type_name("NAME");
  cmd->add_option("--optim", flags->optim,
                  "adamw (default), adamw_8bit, paged_adamw_8bit, sgd or adafactor")
      ->type_name("NAME");
  cmd->add_option("--seq", flags->seq, "Sequence length (default 2048)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24))
      ->type_name("N");
  cmd->add_option("--batch", flags->batch, "Micro-batch size (default 1)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}))
      ->type_name("N");
  cmd->add_flag("--grad-ckpt", flags->grad_ckpt, "Gradient checkpointing on");
  cmd->add_option("--loader", flags->loader,
                  "mmap (transformers' default) or sparkdoc (`sparkdoc load`): sets which "
                  "load-time peak is judged")
      ->type_name("NAME");
  cmd->add_option("--dtype", flags->dtype, "Load dtype: bf16, fp16 or fp32 (default: config.json)")
      ->type_name("NAME");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "Judge against a snapshot recorded with `sparkdoc snapshot -o FILE`")
      ->type_name("FILE");
  cmd->add_option("--available", flags->available, "Judge against this much memory (e.g. 110GB)")
      ->type_name("SIZE");
  cmd->add_option("--cuda-context", flags->cuda_context,
                  "Bytes a new CUDA context takes (default: ~8 GB on GB10 and when no machine is "
                  "read, 1 GiB on a discrete GPU)")
      ->type_name("SIZE");
  cmd->add_option("--samples", flags->samples,
                  "Training examples in the dataset: with --epochs and --grad-accum, the run's "
                  "steps and time")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->type_name("N");
  cmd->add_option("--epochs", flags->epochs, "Epochs (default 1)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000}))
      ->type_name("N");
  cmd->add_option("--grad-accum", flags->grad_accum,
                  "Gradient accumulation: micro-batches per optimizer step (default 1)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}))
      ->type_name("N");
  cmd->add_option("--steps", flags->steps, "Optimizer steps of the run (instead of --samples)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->type_name("N");
  cmd->add_option("--tflops", flags->tflops,
                  "The GPU's dense bf16 matrix rate for the time estimate (default: GB10's "
                  "measured 55-60, the H200's measured 726)")
      ->check(CLI::Range(0.001, 1e6))
      ->type_name("TFLOPS");
  cmd->add_option("--bandwidth", flags->bandwidth,
                  "Memory bandwidth in GB/s for the time estimate (default: `sparkdoc bw` in the "
                  "snapshot, else GB10's measured 180-192, never the 273 spec)")
      ->check(CLI::Range(0.001, 1e6))
      ->type_name("GB/s");
  cmd->add_option("--attention", flags->attention,
                  "sdpa (default: SDPA, flash or xformers kernels) or eager (attn_implementation="
                  "\"eager\": the seq^2 scores are counted)")
      ->type_name("NAME");
  cmd->add_flag("--no-memory", flags->no_memory, "Count and budget only; no verdict");
  cmd->add_flag("--strict-size", flags->strict_size,
                "Require every shard to hold all its data (default: headers suffice)");
  cmd->add_flag("--json", flags->json, "Write the plan as JSON to stdout");
  cmd->add_flag("--timing", flags->timing, "Report how long reading the headers and planning took");
  return [flags]() { return run_plan(*flags); };
}

}  // namespace sparkdoc::cli
