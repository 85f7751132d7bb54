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
#include "cli/progress.h"
#include "cli/snapshot_file.h"
#include "core/fs.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "hub/fetch.h"
#include "hub/model_id.h"
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
  std::string revision;
  bool offline = false;
  bool refresh = false;
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

// The headers of a Hub model, fetched (or read from sparkdoc's cache), with a progress line on
// stderr while the shards come.
Result<hub::FetchResult> fetch_model(const hub::ModelId& id, const PlanFlags& flags) {
  auto settings = hub::settings_from_env();
  if (!settings) return tl::unexpected(std::move(settings.error()));
  hub::FetchOptions options;
  options.refresh = flags.refresh;
  options.offline = flags.offline;
  auto line = std::make_shared<ProgressLine>(std::chrono::seconds(1));
  const std::string label = id.label();
  const std::string endpoint = settings->endpoint;
  options.progress = [line, label, endpoint](size_t shard, size_t shards, uint64_t bytes) {
    line->show(fmt::format("fetching the headers of {} from {}: shard {} of {}, {}", label,
                           endpoint, shard, shards, format_binary(bytes)));
  };
  auto fetched = hub::fetch_headers(id, *settings, options);
  line->clear();
  return fetched;
}

// Where the plan's headers came from, said in the plan: resolved_from, notes, and the "hub" key
// of the JSON.
void tell_source(plan::Plan& p, const hub::ModelId& id, const hub::FetchResult& f) {
  const std::string commit =
      f.commit.empty() ? "" : fmt::format(", commit {}", f.commit.substr(0, 12));
  if (f.from_cache) {
    p.resolved_from =
        fmt::format("headers of {} from sparkdoc's cache{}", id.label(),
                    f.endpoint.empty() ? "" : " (fetched from " + f.endpoint + commit + ")");
    p.notes.push_back(
        fmt::format("the headers were read from {} without the network{}; "
                    "--refresh fetches them again",
                    f.dir, f.fetched_at.empty() ? "" : ", as fetched " + f.fetched_at));
  } else {
    p.resolved_from =
        fmt::format("headers of {} fetched from {}{}", id.label(), f.endpoint, commit);
    p.notes.push_back(fmt::format(
        "fetched {} shard header{}, {} in {} requests, from {}{} into {}; the next plan of this "
        "revision reads them from there",
        f.shards, f.shards == 1 ? "" : "s", format_binary(f.traffic.body_bytes), f.traffic.requests,
        f.endpoint,
        f.checkpoint_file_bytes ? " (of a checkpoint of " + format_gb(f.checkpoint_file_bytes) + ")"
                                : "",
        f.dir));
  }
  for (const auto& n : f.notes) p.notes.push_back(n);
}

nlohmann::json hub_json(const hub::ModelId& id, const hub::FetchResult& f) {
  return {{"model", id.repo()},
          {"revision", id.revision},
          {"endpoint", f.endpoint},
          {"commit", f.commit},
          {"cache_dir", f.dir},
          {"from_cache", f.from_cache},
          {"fetched_at", f.fetched_at},
          {"shards", f.shards},
          {"requests", f.traffic.requests},
          {"body_bytes", f.traffic.body_bytes},
          {"header_bytes", f.traffic.header_bytes},
          {"checkpoint_file_bytes", f.checkpoint_file_bytes},
          {"range_ignored", f.range_ignored}};
}

// MODEL as a path or a Hugging Face cache entry (nothing fetched), or a Hub model whose headers
// are fetched; `id` and `fetched` are filled in the last case.
Result<std::string> model_path(const PlanFlags& flags, std::optional<hub::ModelId>& id,
                               std::optional<hub::FetchResult>& fetched) {
  const std::string& model = flags.model;
  const auto roots = plan::hub_cache_roots();
  if (exists(model) || !hub::looks_like_model_id(model)) {
    if (!flags.revision.empty()) {
      return fail(
          fmt::format("--revision names a revision of a Hub model (ORG/NAME), and {} is "
                      "a path",
                      model));
    }
    return plan::locate_model(model, roots);
  }
  auto parsed = hub::parse_model_id(model, flags.revision);
  if (!parsed) {
    return fail(fmt::format("{} is no file or folder here, and not a Hub model either: {}", model,
                            parsed.error().message));
  }
  // A model downloaded into the Hugging Face cache is planned from there.
  if (!parsed->revision_given) {
    if (std::string entry = plan::locate_model(parsed->repo(), roots); entry != parsed->repo()) {
      return entry;
    }
  } else if (auto snapshot = plan::locate_revision(parsed->repo(), parsed->revision, roots)) {
    return *snapshot;
  }
  if (flags.strict_size) {
    return fail(
        fmt::format("--strict-size needs every shard's data, and {} is not downloaded "
                    "(only its headers would be fetched): download it, or drop "
                    "--strict-size",
                    parsed->label()));
  }
  auto f = fetch_model(*parsed, flags);
  if (!f) return tl::unexpected(std::move(f.error()));
  id = std::move(*parsed);
  fetched = std::move(*f);
  return fetched->dir;
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

  if (flags.offline && flags.refresh) {
    std::cerr << me << ": --refresh fetches from the Hub, and --offline forbids it: choose one\n";
    return kExitUsage;
  }

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
  std::optional<hub::ModelId> id;
  std::optional<hub::FetchResult> fetched;
  auto path = model_path(flags, id, fetched);
  if (!path) {
    std::cerr << me << ": " << path.error().message << "\n";
    return kExitUsage;
  }
  safetensors::HeaderOptions options{flags.strict_size ? safetensors::SizeCheck::kExact
                                                       : safetensors::SizeCheck::kHeaderOnly};
  auto p = plan::plan_model(*path, options, req);
  if (!p) {
    std::cerr << me << ": " << p.error().message << "\n";
    return kExitUsage;
  }
  if (fetched) tell_source(*p, *id, *fetched);
  auto t1 = std::chrono::steady_clock::now();
  if (machine.available) plan::judge_fit(*p, *machine.available);
  double plan_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (flags.json) {
    nlohmann::json j = plan::render_plan_json(*p);
    if (flags.timing) j["timing_ms"] = plan_ms;
    if (fetched) j["hub"] = hub_json(*id, *fetched);
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
      "config.json of MODEL (a folder, a shard, an index, a Hugging Face cache entry, or "
      "ORG/NAME[@REVISION]), counts parameters exactly as PEFT's get_nb_trainable_parameters() "
      "(or Unsloth) reports them, and budgets weights, adapters, gradients, optimizer states, "
      "activations and the load-time peak against the memory available (this machine, a "
      "snapshot, or --available). Training and the load must both fit. Exit 0 fits (or no memory "
      "figure), 1 does not fit (training or the load), 2 usage or an error.\n"
      "Before the download: ORG/NAME that is neither a path here nor in the Hugging Face cache "
      "is planned from the Hub without its weights: config.json, the shard index and each "
      "shard's safetensors header are fetched (two small Range requests a shard, about 100 "
      "bytes a tensor, never tensor data) into sparkdoc's cache ($SPARKDOC_CACHE, "
      "else ~/.cache/sparkdoc/hub; not Hugging Face's), and a later plan of that revision reads "
      "them from there without the network. HF_ENDPOINT (a mirror), HF_TOKEN (or the token "
      "file huggingface-cli login writes; gated models need it and their terms accepted on "
      "the model's page) and HF_HUB_OFFLINE=1 are read as huggingface_hub reads them. libcurl "
      "(apt install libcurl4) is loaded only then.\n"
      "Examples:\n"
      "  sparkdoc plan ~/models/Qwen3.5-35B-A3B --lora 32 --experts --optim adamw_8bit \\\n"
      "      --seq 2048 --batch 2 --grad-ckpt\n"
      "  sparkdoc plan nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 --lora 32 --framework unsloth "
      "\\\n"
      "      --targets q_proj,k_proj,v_proj,o_proj,in_proj,out_proj,up_proj,down_proj\n"
      "  sparkdoc plan Qwen/Qwen3-30B-A3B@main --qlora 16 --no-memory    # headers from the Hub\n"
      "  HF_HUB_OFFLINE=1 sparkdoc plan Qwen/Qwen3-30B-A3B --qlora 16      # from the cache only\n"
      "  sparkdoc plan MODEL --full --snapshot spark.json --json");
  cmd->add_option("model", flags->model,
                  "Model folder, .safetensors file, index, cache entry, or ORG/NAME[@REVISION] "
                  "on the Hub")
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
  cmd->add_option("--revision", flags->revision,
                  "The Hub model's branch, tag or commit (default main; ORG/NAME@REV says the "
                  "same)")
      ->type_name("REV");
  cmd->add_flag("--offline", flags->offline,
                "Never fetch from the Hub: a model not downloaded must be in sparkdoc's cache "
                "(as HF_HUB_OFFLINE=1)");
  cmd->add_flag("--refresh", flags->refresh,
                "Fetch a Hub model's headers again even when sparkdoc's cache holds them");
  cmd->add_flag("--json", flags->json, "Write the plan as JSON to stdout");
  cmd->add_flag("--timing", flags->timing, "Report how long reading the headers and planning took");
  return [flags]() { return run_plan(*flags); };
}

}  // namespace sparkdoc::cli
