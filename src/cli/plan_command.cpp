#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/plan_inputs.h"
#include "plan/locate.h"
#include "plan/plan.h"
#include "plan/render.h"

namespace sparkdoc::cli {
namespace {

int run_plan(const PlanFlags& flags) {
  const char* me = "sparkdoc plan";
  // The machine first: its platform sets the CUDA context and the hardware figures.
  auto machine = read_plan_machine(flags);
  if (!machine) {
    std::cerr << me << ": " << machine.error().message << "\n";
    return kExitUsage;
  }
  auto req = plan_request(flags, *machine);
  if (!req) {
    std::cerr << me << ": " << req.error().message << "\n";
    return kExitUsage;
  }

  auto t0 = std::chrono::steady_clock::now();
  auto source = plan_source(flags);
  if (!source) {
    std::cerr << me << ": " << source.error().message << "\n";
    return kExitUsage;
  }
  safetensors::HeaderOptions options{flags.strict_size ? safetensors::SizeCheck::kExact
                                                       : safetensors::SizeCheck::kHeaderOnly};
  auto p = plan::plan_model(source->path, options, *req);
  if (!p) {
    std::cerr << me << ": " << p.error().message << "\n";
    return kExitUsage;
  }
  tell_source(*p, *source);
  if (!req->hardware) {
    p->notes.push_back(fmt::format(
        "no time estimate: sparkdoc knows no matrix rate or bandwidth for {}; give --tflops "
        "(dense bf16) and --bandwidth (GB/s, `sparkdoc bw` measures it)",
        machine->platform && !machine->platform->gpu_name.empty() ? machine->platform->gpu_name
                                                                  : std::string("this GPU")));
  }
  auto t1 = std::chrono::steady_clock::now();
  if (machine->available) plan::judge_fit(*p, *machine->available);
  double plan_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (!flags.html.empty() && !write_html_page(me, flags.html, plan::render_plan_html(*p))) {
    return kExitUsage;
  }
  if (flags.json) {
    nlohmann::json j = plan::render_plan_json(*p);
    if (flags.timing) j["timing_ms"] = plan_ms;
    if (source->fetched) j["hub"] = hub_json(*source);
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
      "snapshot, or --available). Training and the load must both fit. The budget is drawn as "
      "two bars to scale (training's peak, the load's peak) with the available line, and the "
      "seq x batch frontier as a grid of what fits, what is tight and what does not; --html "
      "FILE draws both as a page. Exit 0 fits (or no memory "
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
  cmd->add_option("--linear-attention", flags->linear_attention,
                  "How Gated DeltaNet layers (Qwen3.5) run: torch (default: transformers' "
                  "fallback, which keeps fp32 copies; what runs without flash-linear-attention) "
                  "or fla (its kernels are installed)")
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
  cmd->add_option("--html", flags->html,
                  "Also write the plan as a self-contained HTML page (the budget's bars against "
                  "the memory available, the seq x batch frontier)")
      ->type_name("FILE");
  cmd->add_flag("--timing", flags->timing, "Report how long reading the headers and planning took");
  return [flags]() { return run_plan(*flags); };
}

}  // namespace sparkdoc::cli
