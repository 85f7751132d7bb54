// Lint rules L21-L28: how a training container is started (000 §1, §6; 001 "Model Cache
// Persistence"; field reports, shared/reference/field-2026.md §4). Each rule opens with its rule.
#include <fmt/format.h>

#include <map>
#include <set>

#include "checks/lint.h"
#include "checks/lint_helpers.h"

namespace sparkdoc::checks {
namespace {

using lint::ContainerRun;

// Compose services, by name, with their flattened keys ("ipc", "ulimits.memlock", ...).
std::map<std::string, std::map<std::string, const job::ConfigValue*>> services(
    const job::JobFile& f) {
  std::map<std::string, std::map<std::string, const job::ConfigValue*>> out;
  for (const job::ConfigValue& v : f.config) {
    std::string_view key = v.key;
    if (!key.starts_with("services.")) continue;
    key.remove_prefix(9);
    size_t dot = key.find('.');
    if (dot == std::string_view::npos) continue;
    out[std::string(key.substr(0, dot))][std::string(key.substr(dot + 1))] = &v;
  }
  return out;
}

bool compose_gpu(const std::map<std::string, const job::ConfigValue*>& s) {
  for (const auto& [k, v] : s) {
    if (k == "runtime" && v->value == "nvidia") return true;
    if (k.starts_with("deploy.resources.reservations.devices") && v->value == "nvidia") return true;
    if (k == "privileged" && v->value == "true") return true;
  }
  return false;
}

uint32_t service_line(const std::map<std::string, const job::ConfigValue*>& s) {
  uint32_t line = 0;
  for (const auto& [k, v] : s) {
    if (line == 0 || (v->line != 0 && v->line < line)) line = v->line;
  }
  return line;
}

// L21 GPU flags on a Spark (000 §1). 000 reports `--gpus all`, `--runtime=nvidia` and `--device
// nvidia.com/gpu=all` failing with "failed to fulfil mount request: open
// /usr/bin/nvidia-cuda-mps-control" and uses --privileged instead. The field does not bear that
// out as a rule: Spark setup guides use `--gpus all` and it works on default hosts; failures
// track container toolkit 1.19.1 with CDI and snap Docker (nvidia-container-toolkit#1910).
//   INFO  on a Spark: what to check if the mount error appears, instead of --privileged.
void l21(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  for (const ContainerRun& r : lint::container_runs(job)) {
    bool gpu_flag = r.has("--gpus") || r.has("--runtime", "nvidia");
    for (const std::string& d : r.values("--device"))
      gpu_flag = gpu_flag || d.starts_with("nvidia.com/gpu");
    if (!gpu_flag) continue;
    sink.add(Verdict::kInfo, *r.file, r.command->line,
             "GPU access through the NVIDIA runtime: 000 §1 saw it fail on GB10 with \"failed to "
             "fulfil mount request: open /usr/bin/nvidia-cuda-mps-control\"; it works on default "
             "Spark hosts, and that failure tracks container toolkit 1.19.1 with CDI and snap "
             "Docker: `sparkdoc check` reads those; --privileged is not needed for it");
  }
}

// L22 --privileged (000 §1; field-2026.md §8.6): it grants every host capability and device to
// the container. 000 uses it to work around the runtime's mount error; on a default host the
// runtime flags give GPU access without it.
//   INFO  --privileged on a GPU container.
void l22(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.has("--privileged") || r.host_maintenance()) continue;
    sink.add(Verdict::kInfo, *r.file, r.command->line,
             "--privileged gives the container every host device and capability (a security "
             "downgrade); 000 §1 uses it only to get past the runtime's mount error: prefer "
             "--gpus all once the toolkit is sound");
  }
}

// A --shm-size value in bytes: "16g", "2048m", "1073741824" (no unit: bytes); 0 when unreadable.
uint64_t shm_bytes(std::string_view v) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i)
    n = n * 10 + static_cast<uint64_t>(v[i] - '0');
  if (i == 0) return 0;
  switch (i < v.size() ? v[i] | 0x20 : 'b') {
    case 'k':
      return n << 10;
    case 'm':
      return n << 20;
    case 'g':
      return n << 30;
    case 'b':
      return n;
    default:
      return 0;
  }
}

// L23 No --ipc=host (000 §1; 002 S5): Docker's 64 MB /dev/shm is too small for DataLoader
// workers and NCCL, which fail with bus errors.
//   WARN  a GPU container with neither --ipc=host nor a --shm-size of 1 GB or more.
void l23(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.training() || r.has("--ipc", "host")) continue;
    bool shm = false;
    for (const std::string& s : r.values("--shm-size"))
      shm = shm || shm_bytes(s) >= (uint64_t{1} << 30);
    if (shm) continue;
    sink.add(Verdict::kWarn, *r.file, r.command->line,
             "no --ipc=host: the container gets Docker's 64 MB /dev/shm, too small for "
             "DataLoader workers and NCCL (bus errors); add --ipc=host (000 §1)");
  }
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kCompose) continue;
    for (const auto& [name, s] : services(f)) {
      if (!compose_gpu(s) || s.contains("ipc") || s.contains("shm_size")) continue;
      sink.add(Verdict::kWarn, f, service_line(s),
               fmt::format("service {} has no `ipc: host`: Docker's 64 MB /dev/shm is too small "
                           "for DataLoader workers and NCCL (000 §1)",
                           name));
    }
  }
}

// L24 No --ulimit memlock=-1 (000 §1): CUDA pinned host allocations fail under Docker's small
// locked-memory limit.
//   WARN  a GPU container without it.
void l24(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.training()) continue;
    bool memlock = false;
    for (const std::string& u : r.values("--ulimit"))
      memlock = memlock || u.starts_with("memlock=-1");
    if (memlock) continue;
    sink.add(Verdict::kWarn, *r.file, r.command->line,
             "no --ulimit memlock=-1: CUDA pinned host allocations fail under Docker's "
             "locked-memory limit (000 §1)");
  }
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kCompose) continue;
    for (const auto& [name, s] : services(f)) {
      if (!compose_gpu(s)) continue;
      auto it = s.find("ulimits.memlock");
      if (it != s.end() && it->second->value == "-1") continue;
      if (s.contains("ulimits.memlock.soft")) continue;
      sink.add(Verdict::kWarn, f, service_line(s),
               fmt::format("service {} has no `ulimits: memlock: -1`: pinned host allocations "
                           "fail (000 §1)",
                           name));
    }
  }
}

// L25 No --ulimit stack=67108864 (000 §1): Docker's 8 MiB stack is the recipe's other limit.
//   INFO  a GPU container without it.
void l25(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.training()) continue;
    bool stack = false;
    for (const std::string& u : r.values("--ulimit")) stack = stack || u.starts_with("stack=");
    if (stack) continue;
    sink.add(Verdict::kInfo, *r.file, r.command->line,
             "no --ulimit stack=67108864: the recipe raises Docker's 8 MiB stack to 64 MiB "
             "(000 §1)");
  }
}

// L26 --privileged without NVIDIA_VISIBLE_DEVICES=all (000 §1): with neither --gpus nor the
// variable, the NVIDIA runtime exposes no GPU to the container.
//   WARN  --privileged, no --gpus, no NVIDIA_VISIBLE_DEVICES.
void l26(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.has("--privileged") || r.has("--gpus") || r.host_maintenance()) continue;
    bool visible = false;
    for (const std::string& e : r.values("-e"))
      visible = visible || e.starts_with("NVIDIA_VISIBLE_DEVICES");
    for (const std::string& e : r.values("--env"))
      visible = visible || e.starts_with("NVIDIA_VISIBLE_DEVICES");
    if (visible) continue;
    sink.add(Verdict::kWarn, *r.file, r.command->line,
             "--privileged without --gpus or -e NVIDIA_VISIBLE_DEVICES=all: the runtime exposes "
             "no GPU to the container; add -e NVIDIA_VISIBLE_DEVICES=all (000 §1)");
  }
}

// L27 ionice (or nice) in front of docker (000 §6): it lowers the priority of the docker client,
// which only forwards the request; the container's processes run at normal I/O priority.
//   WARN  ionice/nice before `docker run`.
void l27(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const ContainerRun& r : lint::container_runs(job)) {
    const auto& argv = r.command->argv;
    std::string prefix;
    for (size_t i = 0; i + 1 < r.run_at && i < argv.size(); ++i) {
      if (argv[i] == "ionice" || argv[i] == "nice") prefix = argv[i];
    }
    if (prefix.empty()) continue;
    sink.add(Verdict::kWarn, *r.file, r.command->line,
             fmt::format("{} applies to the docker client, not to the container: the training "
                         "process keeps its normal I/O priority; run ionice inside the container "
                         "(or `sparkdoc run`, which sets it on the command), or use "
                         "--blkio-weight (000 §6)",
                         prefix));
  }
}

// L28 The model cache on the container's own filesystem (001): a 67 GB checkpoint is downloaded
// again after every container restart (at ~30 KB/s from the Hub on one Spark).
//   INFO  a GPU container with no volume for the Hugging Face cache when the job loads from the
//         Hub.
void l28(const job::Job& job, const LintContext&, LintSink& sink) {
  bool hub_load = false;
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c)) return;
    auto id = lint::loaded_model(c);
    // 001 names the model once: model_name=model_id with `model_id = "..."` earlier.
    for (std::string_view key : {"model_name", "pretrained_model_name_or_path"}) {
      if (const job::PyValue* v = lint::resolved(f, c.keyword(key), c.line); !id && v)
        id = v->string();
    }
    if (const job::PyValue* v = lint::resolved(f, c.positional(0), c.line); !id && v)
      id = v->string();
    if (id && id->find('/') != std::string::npos && !id->starts_with("/") &&
        !id->starts_with(".")) {
      hub_load = true;
    }
  });
  if (!hub_load) return;
  for (const ContainerRun& r : lint::container_runs(job)) {
    if (!r.training()) continue;
    bool cache = false;
    for (std::string_view opt : {"-v", "--volume", "--mount"}) {
      for (const std::string& v : r.values(opt)) {
        cache = cache || v.find("huggingface") != std::string::npos ||
                v.find("hf") != std::string::npos || v.find("cache") != std::string::npos ||
                v.find("models") != std::string::npos;
      }
    }
    if (cache) continue;
    sink.add(Verdict::kInfo, *r.file, r.command->line,
             "no volume for the Hugging Face cache: the model is downloaded again in every new "
             "container; mount one, e.g. -v ~/.cache/huggingface:/root/.cache/huggingface (001)");
  }
}

}  // namespace

const CheckInfo& l21_gpu_flags_spark() {
  static constexpr CheckInfo kInfo{
      .id = "L21",
      .title = "GPU flags of the NVIDIA container runtime on a Spark",
      .reads =
          "Shell scripts, Makefiles, compose files: docker run --gpus, --runtime=nvidia, "
          "--device nvidia.com/gpu",
      .symptom =
          "docker run fails: \"failed to fulfil mount request: open "
          "/usr/bin/nvidia-cuda-mps-control: no such file\"",
      .cause =
          "000 §1 saw the runtime's mount fail on GB10; the field ties that failure to "
          "container toolkit 1.19.1 with CDI and to snap Docker, while --gpus all works on "
          "default Spark hosts.",
      .how_checked = "Looks for the runtime's GPU flags in docker run lines, on a Spark.",
      .fix =
          "Keep --gpus all; if the mount error appears, run `sparkdoc check` for the toolkit, "
          "CDI and Docker packaging rather than falling back to --privileged.",
      .source = "000 §1; nvidia-container-toolkit#1910",
      .keywords =
          "gpus all runtime nvidia device nvidia.com/gpu mount request "
          "nvidia-cuda-mps-control docker run failed to fulfil",
      .lint = &l21,
  };
  return kInfo;
}

const CheckInfo& l22_privileged() {
  static constexpr CheckInfo kInfo{
      .id = "L22",
      .title = "--privileged for GPU access",
      .reads = "docker run lines",
      .symptom = "The container can reach every host device",
      .cause =
          "--privileged lifts every confinement; 000 §1 used it only to get past a mount "
          "error.",
      .how_checked = "Looks for --privileged in docker run lines.",
      .fix = "Use --gpus all on a sound toolkit; keep --privileged for what needs it.",
      .source = "000 §1",
      .keywords = "privileged security capabilities docker",
      .lint = &l22,
  };
  return kInfo;
}

const CheckInfo& l23_ipc_host() {
  static constexpr CheckInfo kInfo{
      .id = "L23",
      .title = "A GPU container without --ipc=host",
      .reads = "docker run lines, compose services",
      .symptom = "DataLoader workers die with bus errors; NCCL fails on shared memory",
      .cause = "Docker's default /dev/shm is 64 MB.",
      .how_checked = "Looks for GPU containers with neither --ipc=host nor a --shm-size in GB.",
      .fix = "docker run --ipc=host (compose: ipc: host).",
      .source = "000 §1",
      .keywords = "ipc host shm shared memory bus error dataloader nccl docker",
      .lint = &l23,
  };
  return kInfo;
}

const CheckInfo& l24_memlock() {
  static constexpr CheckInfo kInfo{
      .id = "L24",
      .title = "A GPU container without --ulimit memlock=-1",
      .reads = "docker run lines, compose services",
      .symptom = "cudaHostAlloc / pin_memory fails inside the container",
      .cause = "Docker's locked-memory limit is small; CUDA pinned allocations need more.",
      .how_checked = "Looks for GPU containers without memlock=-1.",
      .fix = "--ulimit memlock=-1 (compose: ulimits: memlock: -1).",
      .source = "000 §1",
      .keywords = "ulimit memlock pinned memory pin_memory locked docker",
      .lint = &l24,
  };
  return kInfo;
}

const CheckInfo& l25_stack() {
  static constexpr CheckInfo kInfo{
      .id = "L25",
      .title = "A GPU container without --ulimit stack=67108864",
      .reads = "docker run lines",
      .symptom = "Deep recursion crashes in the container",
      .cause = "Docker's default stack limit is 8 MiB.",
      .how_checked = "Looks for GPU containers without a stack ulimit.",
      .fix = "--ulimit stack=67108864.",
      .source = "000 §1",
      .keywords = "ulimit stack 67108864 docker",
      .lint = &l25,
  };
  return kInfo;
}

const CheckInfo& l26_visible_devices() {
  static constexpr CheckInfo kInfo{
      .id = "L26",
      .title = "--privileged without NVIDIA_VISIBLE_DEVICES=all",
      .reads = "docker run lines",
      .symptom = "torch.cuda.is_available() is False inside a privileged container",
      .cause =
          "Without --gpus, the NVIDIA runtime exposes only the GPUs NVIDIA_VISIBLE_DEVICES "
          "names.",
      .how_checked = "Looks for --privileged with neither --gpus nor NVIDIA_VISIBLE_DEVICES.",
      .fix = "-e NVIDIA_VISIBLE_DEVICES=all.",
      .source = "000 §1",
      .keywords = "nvidia_visible_devices privileged no gpu is_available false docker",
      .lint = &l26,
  };
  return kInfo;
}

const CheckInfo& l27_ionice_client() {
  static constexpr CheckInfo kInfo{
      .id = "L27",
      .title = "ionice on the docker client instead of the container",
      .reads = "Shell lines: ionice / nice before docker run",
      .symptom = "Shard reads still compete with the host at normal I/O priority",
      .cause =
          "ionice sets the priority of the process it starts, here the docker CLI, which only "
          "forwards the request to the daemon.",
      .how_checked = "Looks for ionice or nice before docker run on one line.",
      .fix =
          "Run ionice inside the container, use `sparkdoc run` (which sets the command's I/O "
          "priority), or --blkio-weight.",
      .source = "000 §6",
      .keywords = "ionice nice io priority docker client container",
      .lint = &l27,
  };
  return kInfo;
}

const CheckInfo& l28_model_cache_volume() {
  static constexpr CheckInfo kInfo{
      .id = "L28",
      .title = "The model cache is not on a persistent volume",
      .reads = "docker run lines and the models the scripts load",
      .symptom =
          "Every new container downloads the model again (hours at Hub speeds seen on a "
          "Spark)",
      .cause = "The Hugging Face cache lives in the container's filesystem unless mounted.",
      .how_checked =
          "Looks for GPU containers without a cache volume when a script loads from "
          "the Hub.",
      .fix = "-v ~/.cache/huggingface:/root/.cache/huggingface (or set HF_HOME to a mount).",
      .source = "001",
      .keywords = "model cache volume huggingface hf_home download again persistent mount",
      .lint = &l28,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
