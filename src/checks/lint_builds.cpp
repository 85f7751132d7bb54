// Lint rules L29-L34: source builds of CUDA extensions in a job's Dockerfiles and scripts
// (000 §2; field-2026.md §5, §7). Each rule opens with its rule.
#include <fmt/format.h>

#include <array>

#include "checks/lint.h"
#include "checks/lint_helpers.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

// Packages whose install compiles CUDA code when built from source.
constexpr std::array<std::string_view, 10> kCudaExtensions{
    "flash-attn", "causal-conv1d", "mamba-ssm", "xformers",          "apex",
    "deepspeed",  "bitsandbytes",  "vllm",      "flashinfer-python", "transformer-engine"};

bool builds_from_source(const lint::Install& in) {
  if (!in.no_build_isolation && !in.no_binary) return false;
  for (std::string_view p : kCudaExtensions) {
    if (in.names(p)) return true;
  }
  return in.no_binary;
}

using lint::Setting;

// Every place a job sets a variable: ENV/ARG, export, NAME=value before a command.
std::vector<Setting> settings(const job::Job& job, std::string_view name) {
  std::vector<Setting> out;
  const std::string prefix = std::string(name) + "=";
  for (const job::JobFile& f : job.files) {
    for (const job::DockerInstruction& d : f.docker) {
      if (d.keyword != "ENV" && d.keyword != "ARG") continue;
      if (auto v = lint::env_set(f, name, d.line); v && d.args.find(prefix) != std::string::npos) {
        out.push_back(Setting{&f, d.line, *v});
      }
    }
    for (const job::Command& c : f.commands) {
      if (auto v = c.env_value(name)) out.push_back(Setting{&f, c.line, *v});
      if (!c.argv.empty() && c.argv[0] == "export") {
        for (const std::string& w : c.argv) {
          if (w.starts_with(prefix)) out.push_back(Setting{&f, c.line, w.substr(prefix.size())});
        }
      }
    }
  }
  return out;
}

// L29 A TORCH_CUDA_ARCH_LIST without GB10 (000 §2; fatbin-and-elf.md §2.6). Code for 12.0 runs
// on 12.1 (sm_120 SASS, compute_120 PTX, 12.0f); so does any PTX by JIT, slowly at first use. A
// list with neither has no code a GB10 can run: kernel launches fail with "no kernel image is
// available". A list with 12.0 but no 12.1 is fine: never flag it (field-2026.md §8.3).
//   FAIL  no 12.x entry and no +PTX, on a Spark; WARN  no 12.x entry, PTX only.
void l29(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  for (const Setting& s : settings(job, "TORCH_CUDA_ARCH_LIST")) {
    std::string list = s.value;
    for (char& c : list) {
      if (c == ';' || c == ',') c = ' ';
    }
    bool blackwell12 = false;
    bool ptx = false;
    for (std::string_view entry : split_ws(list)) {
      blackwell12 = blackwell12 || entry.starts_with("12.");
      ptx = ptx || entry.ends_with("+PTX");
    }
    if (blackwell12) continue;
    if (ptx) {
      sink.add(Verdict::kWarn, *s.file, s.line,
               fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\" has no 12.x entry: on a GB10 the kernels "
                           "run only as PTX JIT-compiled at first use (minutes); add 12.0 (which "
                           "runs on 12.1) or 12.1a (000 §2: \"...;12.0;12.1+PTX\")",
                           s.value));
    } else {
      sink.add(Verdict::kFail, *s.file, s.line,
               fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\" has no code a GB10 can run: kernel "
                           "launches fail with \"no kernel image is available\"; add 12.0 and "
                           "12.1+PTX (000 §2)",
                           s.value));
    }
  }
}

// L30 Source builds without MAX_JOBS (000 §2): ninja runs one nvcc job per CPU, each taking
// several GB, and the build is killed for memory. 000 says a Spark has 72 ARM cores; a GB10 has
// 20 (10 Cortex-X925 + 10 Cortex-A725), which is still enough jobs to run out of memory.
//   WARN  a --no-build-isolation / --no-binary build of a CUDA extension with MAX_JOBS unset.
void l30(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const lint::Install& in : lint::installs(job)) {
    if (!builds_from_source(in)) continue;
    if (lint::env_set(*in.file, "MAX_JOBS", in.command->line, in.command)) continue;
    sink.add(Verdict::kWarn, *in.file, in.command->line,
             "a source build of CUDA extensions with MAX_JOBS unset runs one nvcc job per CPU, "
             "each several GB: the build runs out of memory; set MAX_JOBS=8 (000 §2; 000 counts "
             "72 cores, a GB10 has 20)");
  }
}

// L31 Source builds without CUDA_HOME (000 §2): the extension's setup looks for nvcc through
// it, and DGX OS does not put nvcc on PATH.
//   INFO  a source build of a CUDA extension with CUDA_HOME unset.
void l31(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const lint::Install& in : lint::installs(job)) {
    if (!builds_from_source(in)) continue;
    if (lint::env_set(*in.file, "CUDA_HOME", in.command->line, in.command)) continue;
    sink.add(Verdict::kInfo, *in.file, in.command->line,
             "CUDA_HOME is not set for this source build: extensions find nvcc through it and DGX "
             "OS does not put nvcc on PATH; CUDA_HOME=/usr/local/cuda (000 §2)");
  }
}

// L32 causal-conv1d without CAUSAL_CONV1D_FORCE_BUILD=TRUE (000 §2): its setup downloads a
// prebuilt wheel when one matches, and none carries sm_12x code.
//   WARN  an install of causal-conv1d with the variable unset.
void l32(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const lint::Install& in : lint::installs(job)) {
    if (!in.names("causal-conv1d")) continue;
    auto v = lint::env_set(*in.file, "CAUSAL_CONV1D_FORCE_BUILD", in.command->line, in.command);
    if (v && to_lower(*v) == "true") continue;
    sink.add(Verdict::kWarn, *in.file, in.command->line,
             "causal-conv1d without CAUSAL_CONV1D_FORCE_BUILD=TRUE installs a prebuilt wheel "
             "with no sm_12x code; force the build with a TORCH_CUDA_ARCH_LIST that has 12.0 "
             "(000 §2)");
  }
}

// L33 mamba-ssm built in a docker build without the selective_scan_cuda import patch (000 §2):
// the build step sees no GPU, skips selective_scan_cuda.so silently, and `import mamba_ssm`
// then fails; Nemotron-H never calls it, so guarding the import is safe.
//   WARN  a Dockerfile that installs mamba-ssm and never touches selective_scan_interface.py.
void l33(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const lint::Install& in : lint::installs(job)) {
    if (!in.names("mamba-ssm") || in.file->kind != job::FileKind::kDockerfile) continue;
    bool patched = false;
    for (const job::Command& c : in.file->commands) {
      patched = patched || c.text.find("selective_scan_cuda") != std::string::npos ||
                c.text.find("selective_scan_interface") != std::string::npos;
    }
    for (const job::DockerInstruction& d : in.file->docker) {
      patched = patched || d.args.find("selective_scan") != std::string::npos;
    }
    if (patched) continue;
    sink.add(Verdict::kWarn, *in.file, in.command->line,
             "mamba-ssm built in a docker build step skips selective_scan_cuda (no GPU there) and "
             "`import mamba_ssm` then fails: guard `import selective_scan_cuda` in "
             "mamba_ssm/ops/selective_scan_interface.py with try/except after the install "
             "(000 §2; sparkdoc audit reads whether it is guarded)");
  }
}

// L34 bitsandbytes built for other GPUs (000 §2): -DCOMPUTE_CAPABILITY without 120 or 121 makes
// a library with no code for GB10. (000 builds it from source because wheels lacked Blackwell;
// bitsandbytes ships CC 12.1 aarch64 builds since PR #1829, 2025-12-11.)
//   WARN  a cmake of bitsandbytes whose COMPUTE_CAPABILITY has neither, on a Spark.
void l34(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  for (const job::JobFile& f : job.files) {
    if (!lint::has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      if (c.argv.empty() || c.argv[0] != "cmake") continue;
      for (const std::string& w : c.argv) {
        if (!w.starts_with("-DCOMPUTE_CAPABILITY=")) continue;
        std::string caps = w.substr(std::string("-DCOMPUTE_CAPABILITY=").size());
        if (caps.find("120") != std::string::npos || caps.find("121") != std::string::npos)
          continue;
        sink.add(Verdict::kWarn, f, c.line,
                 fmt::format("-DCOMPUTE_CAPABILITY=\"{}\" has no 120 or 121: the library has no "
                             "code for GB10; add 120;121 (000 §2) — or install a wheel: "
                             "bitsandbytes ships CC 12.1 aarch64 builds since PR #1829",
                             caps));
      }
    }
  }
}

}  // namespace

const CheckInfo& l29_arch_list() {
  static constexpr CheckInfo kInfo{
      .id = "L29",
      .title = "TORCH_CUDA_ARCH_LIST without code for GB10",
      .reads = "Dockerfiles, shell scripts: TORCH_CUDA_ARCH_LIST where it is set",
      .symptom =
          "\"no kernel image is available for execution on the device\" from a "
          "source-built extension, or minutes of PTX JIT at the first step",
      .cause =
          "The arch list decides which GPUs the extension gets code for; GB10 runs 12.0 and "
          "12.1 code and PTX.",
      .how_checked =
          "Reads each value of TORCH_CUDA_ARCH_LIST for a 12.x entry and +PTX, on a "
          "Spark. A list with 12.0 and no 12.1 is fine: 12.0 code runs on 12.1.",
      .fix = "TORCH_CUDA_ARCH_LIST=\"8.0;8.6;8.7;8.9;9.0;12.0;12.1+PTX\" (12.1a for NVFP4).",
      .source = "000 §2",
      .keywords =
          "torch_cuda_arch_list arch list sm_121 sm_120 no kernel image ptx jit build "
          "extension",
      .lint = &l29,
  };
  return kInfo;
}

const CheckInfo& l30_max_jobs() {
  static constexpr CheckInfo kInfo{
      .id = "L30",
      .title = "Source builds without MAX_JOBS",
      .reads = "pip/uv install lines with --no-build-isolation or --no-binary, and MAX_JOBS",
      .symptom =
          "docker build is killed or the box freezes while compiling flash-attn, "
          "causal-conv1d or mamba-ssm",
      .cause = "ninja starts one nvcc job per CPU and each takes several GB.",
      .how_checked = "Looks for source builds of CUDA extensions with MAX_JOBS unset.",
      .fix = "MAX_JOBS=8 on the build (000 says a Spark has 72 cores: a GB10 has 20).",
      .source = "000 §2",
      .keywords = "max_jobs nvcc jobs build killed memory no-build-isolation compile cores",
      .lint = &l30,
  };
  return kInfo;
}

const CheckInfo& l31_cuda_home() {
  static constexpr CheckInfo kInfo{
      .id = "L31",
      .title = "Source builds without CUDA_HOME",
      .reads = "pip/uv install lines with --no-build-isolation or --no-binary, and CUDA_HOME",
      .symptom = "\"CUDA_HOME environment variable is not set\" or nvcc not found during a build",
      .cause = "Extension builds find nvcc through CUDA_HOME; DGX OS does not put nvcc on PATH.",
      .how_checked = "Looks for source builds of CUDA extensions with CUDA_HOME unset.",
      .fix = "CUDA_HOME=/usr/local/cuda on the build.",
      .source = "000 §2",
      .keywords = "cuda_home nvcc not found build extension",
      .lint = &l31,
  };
  return kInfo;
}

const CheckInfo& l32_causal_conv1d_force_build() {
  static constexpr CheckInfo kInfo{
      .id = "L32",
      .title = "causal-conv1d without a forced build",
      .reads = "pip/uv install lines of causal-conv1d",
      .symptom = "causal-conv1d imports but its kernels fail on GB10",
      .cause = "Its setup downloads a prebuilt wheel when one matches, and none carries sm_12x.",
      .how_checked = "Looks for causal-conv1d installs with CAUSAL_CONV1D_FORCE_BUILD unset.",
      .fix = "CAUSAL_CONV1D_FORCE_BUILD=TRUE with an arch list that has 12.0.",
      .source = "000 §2",
      .keywords = "causal-conv1d causal_conv1d force build prebuilt wheel",
      .lint = &l32,
  };
  return kInfo;
}

const CheckInfo& l33_mamba_import_patch() {
  static constexpr CheckInfo kInfo{
      .id = "L33",
      .title = "mamba-ssm built without the selective_scan_cuda import guard",
      .reads = "Dockerfiles: mamba-ssm installs and later RUN lines",
      .symptom = "ImportError: selective_scan_cuda (or ModuleNotFoundError) at `import mamba_ssm`",
      .cause =
          "A build without a GPU skips selective_scan_cuda.so silently; the module imports "
          "it unconditionally.",
      .how_checked =
          "Looks for a Dockerfile that installs mamba-ssm and never edits "
          "selective_scan_interface.py.",
      .fix =
          "Wrap `import selective_scan_cuda` in try/except after the install (000 §2); "
          "Nemotron-H uses Triton kernels and never calls it.",
      .source = "000 §2",
      .keywords = "mamba-ssm selective_scan_cuda importerror selective_scan_interface patch",
      .lint = &l33,
  };
  return kInfo;
}

const CheckInfo& l34_bitsandbytes_capability() {
  static constexpr CheckInfo kInfo{
      .id = "L34",
      .title = "bitsandbytes built without GB10's compute capability",
      .reads = "cmake lines with -DCOMPUTE_CAPABILITY",
      .symptom = "bitsandbytes falls back to CPU or fails to load its CUDA library",
      .cause = "COMPUTE_CAPABILITY lists the GPUs the library gets code for.",
      .how_checked = "Looks for -DCOMPUTE_CAPABILITY without 120 or 121, on a Spark.",
      .fix =
          "-DCOMPUTE_CAPABILITY=\"80;86;87;89;90;120;121\", or a current wheel (CC 12.1 "
          "aarch64 builds since bitsandbytes PR #1829).",
      .source = "000 §2",
      .keywords = "bitsandbytes compute_capability cmake source build 121",
      .lint = &l34,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
