#include "cli/plan_inputs.h"

#include <fmt/format.h>

#include "capture/capture.h"
#include "cli/snapshot_file.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"

namespace sparkdoc::cli {
namespace {

// The CUDA context's bytes and where they come from: --cuda-context, else by the platform read
// (a new context takes ~8 GB of GB10's unified pool, 000 §6 and §10; ~1 GiB on the H200), else
// GB10's figure, since a Spark is what is planned for.
std::string set_cuda_context(const PlanFlags& flags, const PlanMachine& machine,
                             plan::PlanRequest& req) {
  const plan::Constants k = plan::default_constants();
  if (!flags.cuda_context.empty()) {
    auto bytes = parse_memory_size(flags.cuda_context);
    if (!bytes) return "--cuda-context: " + bytes.error().message;
    // 0 would read as "not given" (the H200's figure); no CUDA context takes nothing.
    if (*bytes == 0) return "--cuda-context: a CUDA context takes memory; give its size, e.g. 8GB";
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
std::optional<plan::Hardware> hardware_for(const PlanFlags& flags, const PlanMachine& machine) {
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

}  // namespace

Result<PlanMachine> read_plan_machine(const PlanFlags& flags) {
  PlanMachine machine;
  if (flags.no_memory) return machine;
  if (!flags.available.empty()) {
    auto bytes = parse_memory_size(flags.available);
    if (!bytes) return fail("--available: " + bytes.error().message);
    machine.available = plan::Available{*bytes, "--available"};
    return machine;
  }
  Snapshot s;
  std::string source = "live";
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) return tl::unexpected(std::move(loaded.error()));
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
  // No headroom figure (meminfo or the GPU unread): planned without a verdict.
  if (auto h = facts::compute_headroom(s, *machine.platform)) {
    machine.available = plan::Available{h->bytes > 0 ? static_cast<uint64_t>(h->bytes) : 0,
                                        fmt::format("{}: {}", source, h->rule)};
  }
  return machine;
}

Result<plan::PlanRequest> plan_request(const PlanFlags& flags, const PlanMachine& machine) {
  int methods = (flags.full ? 1 : 0) + (flags.lora ? 1 : 0) + (flags.qlora ? 1 : 0);
  if (methods > 1) {
    return fail("choose one of --full, --lora R, --qlora R");
  }
  plan::PlanRequest req;
  req.training = flags.full    ? plan::Training::kFull
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
  if (flags.framework == "peft")
    req.lora.framework = plan::Framework::kPeft;
  else if (flags.framework == "unsloth")
    req.lora.framework = plan::Framework::kUnsloth;
  else {
    return fail("--framework: peft or unsloth");
  }
  auto optim = plan::parse_optimizer(flags.optim);
  if (!optim) {
    return fail("--optim: adamw, adamw_8bit, paged_adamw_8bit, sgd or adafactor");
  }
  req.setup.optimizer = *optim;
  if (flags.seq == 0 || flags.batch == 0) {
    return fail("--seq and --batch must be at least 1");
  }
  req.setup.seq = flags.seq;
  req.setup.batch = flags.batch;
  req.setup.grad_ckpt = flags.grad_ckpt;
  if (flags.loader != "mmap" && flags.loader != "sparkdoc") {
    return fail("--loader: mmap or sparkdoc");
  }
  req.setup.loader = flags.loader == "mmap" ? plan::LoadMethod::kMmap : plan::LoadMethod::kSparkdoc;
  if (flags.attention != "sdpa" && flags.attention != "eager") {
    return fail("--attention: sdpa or eager");
  }
  req.setup.attention =
      flags.attention == "sdpa" ? plan::Attention::kSdpa : plan::Attention::kEager;
  if (flags.linear_attention != "torch" && flags.linear_attention != "fla") {
    return fail("--linear-attention: torch or fla");
  }
  req.setup.linear_attention = flags.linear_attention == "torch" ? plan::LinearAttention::kTorch
                                                                 : plan::LinearAttention::kFla;
  req.dtype_override = flags.dtype;
  if (flags.offline && flags.refresh) {
    return fail("--refresh fetches from the Hub, and --offline forbids it: choose one");
  }
  if (auto error = set_cuda_context(flags, machine, req); !error.empty()) return fail(error);
  req.hardware = hardware_for(flags, machine);
  req.run = {flags.samples, flags.epochs, flags.grad_accum, flags.steps};
  return req;
}

}  // namespace sparkdoc::cli
