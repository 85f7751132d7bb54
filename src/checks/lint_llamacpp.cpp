// Lint rules L35-L40: building and serving with llama.cpp on a GB10 (001 "Inference:
// llama.cpp"). Each rule opens with its rule.
#include <fmt/format.h>

#include "checks/lint.h"
#include "checks/lint_helpers.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

using lint::Setting;

// A CMake cache variable set by a cmake command (-DNAME=VALUE, -DNAME:TYPE=VALUE) or a
// CMakeCache.txt, with where.
std::vector<Setting> cmake_settings(const job::Job& job, std::string_view name) {
  std::vector<Setting> out;
  for (const job::JobFile& f : job.files) {
    if (f.kind == job::FileKind::kCMakeCache) {
      for (const job::ConfigValue& v : f.config) {
        if (v.key == name) out.push_back(Setting{&f, v.line, v.value});
      }
      continue;
    }
    if (!lint::has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      if (c.argv.empty() || c.argv[0].find("cmake") == std::string::npos) continue;
      for (const std::string& w : c.argv) {
        std::string_view s = w;
        if (!s.starts_with("-D")) continue;
        s.remove_prefix(2);
        size_t eq = s.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view key = s.substr(0, std::min(eq, s.find(':')));
        if (key == name) out.push_back(Setting{&f, c.line, std::string(s.substr(eq + 1))});
      }
    }
  }
  return out;
}

bool is_llama_cpp_build(const job::Job& job) {
  return !cmake_settings(job, "GGML_CUDA").empty() || !cmake_settings(job, "LLAMA_CUDA").empty();
}

// Every llama-server (or llama-cli) command.
std::vector<std::pair<const job::JobFile*, const job::Command*>> servers(const job::Job& job) {
  std::vector<std::pair<const job::JobFile*, const job::Command*>> out;
  for (const job::JobFile& f : job.files) {
    if (!lint::has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      for (const std::string& w : c.argv) {
        std::string_view name = w;
        if (size_t slash = name.rfind('/'); slash != std::string_view::npos)
          name = name.substr(slash + 1);
        if (name == "llama-server") {
          out.emplace_back(&f, &c);
          break;
        }
      }
    }
  }
  return out;
}

// L35 A llama.cpp CUDA build without GB10's architecture (001: -DCMAKE_CUDA_ARCHITECTURES=121).
// 120 runs on 12.1 too; "native" builds for the GPU of the build machine, right on the Spark
// itself.
//   WARN  CMAKE_CUDA_ARCHITECTURES without 120, 121 (or 12x with a suffix) or native, on a Spark.
void l35(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark || !is_llama_cpp_build(job)) return;
  for (const Setting& s : cmake_settings(job, "CMAKE_CUDA_ARCHITECTURES")) {
    std::string v = to_lower(s.value);
    if (v.find("12") != std::string::npos || v.find("native") != std::string::npos ||
        v.find("all") != std::string::npos) {
      continue;
    }
    sink.add(Verdict::kWarn, *s.file, s.line,
             fmt::format("CMAKE_CUDA_ARCHITECTURES={} has no code for GB10: build with 121 (001)",
                         s.value));
  }
}

// L36 GGML_CUDA_FORCE_CUBLAS=ON (001): on GB10 Blackwell it makes llama.cpp produce garbage
// output.
//   FAIL  wherever it is switched on, on a Spark.
void l36(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  for (const Setting& s : cmake_settings(job, "GGML_CUDA_FORCE_CUBLAS")) {
    std::string v = to_lower(s.value);
    if (v != "on" && v != "1" && v != "true" && v != "yes") continue;
    sink.add(Verdict::kFail, *s.file, s.line,
             "GGML_CUDA_FORCE_CUBLAS=ON makes llama.cpp produce garbage output on GB10 Blackwell: "
             "leave it OFF (001)");
  }
}

// L37 llama-server without --no-mmap (001): the model loads in ~22 s instead of ~104 s, and its
// pages do not sit in the page cache of the one memory pool.
//   INFO  a llama-server line without it.
void l37(const job::Job& job, const LintContext&, LintSink& sink) {
  for (auto [f, c] : servers(job)) {
    if (c->flag({"--no-mmap"})) continue;
    sink.add(Verdict::kInfo, *f, c->line,
             "llama-server without --no-mmap: 001 measured the load at ~104 s with mmap against "
             "~22 s without, and the mapped pages share the unified pool; add --no-mmap");
  }
}

// L38 --jinja for Qwen3.5 (001): it picks up the embedded thinking template, which spends tokens
// on reasoning_content; 001 serves with --chat-template chatml.
//   INFO  --jinja on a llama-server line, for a Qwen3.5 model.
void l38(const job::Job& job, const LintContext&, LintSink& sink) {
  for (auto [f, c] : servers(job)) {
    if (!c->flag({"--jinja"})) continue;
    std::string model = to_lower(c->option({"-m", "--model", "-hf", "--hf-repo"}).value_or(""));
    if (model.find("qwen3.5") == std::string::npos && model.find("qwen3_5") == std::string::npos) {
      continue;
    }
    sink.add(Verdict::kInfo, *f, c->line,
             "--jinja picks up Qwen3.5's embedded thinking template and spends tokens on "
             "reasoning_content: 001 serves with --chat-template chatml");
  }
}

// L39 A context larger than 16384 (001): 32768 cuts decode speed by about 30% on a GB10.
//   INFO  --ctx-size / -c above 16384.
void l39(const job::Job& job, const LintContext&, LintSink& sink) {
  for (auto [f, c] : servers(job)) {
    auto v = c->option({"--ctx-size", "-c"});
    if (!v) continue;
    auto n = parse_u64(*v);
    if (!n || *n <= 16384) continue;
    sink.add(Verdict::kInfo, *f, c->line,
             fmt::format("--ctx-size {}: 001 measured decode about 30% slower at 32768 than at "
                         "16384 on a GB10; use the smallest context the task needs",
                         *n));
  }
}

// L40 llama-server without full offload or flash attention (001: -ngl 999 -fa 1): without -ngl
// layers stay on the CPU; without -fa decode is slower.
//   INFO  either missing.
void l40(const job::Job& job, const LintContext&, LintSink& sink) {
  for (auto [f, c] : servers(job)) {
    std::vector<std::string> missing;
    // -ngl 0 keeps every layer on the CPU and -fa 0 / off turns flash attention off: as good as
    // leaving them out.
    const job::Command* command = c;
    auto off = [command](std::initializer_list<std::string_view> names) {
      if (!command->flag(names)) return true;
      std::optional<std::string> v = command->option(names);
      return v && (*v == "0" || *v == "off" || *v == "false");
    };
    if (off({"-ngl", "--n-gpu-layers", "--gpu-layers"})) missing.push_back("-ngl 999");
    if (off({"-fa", "--flash-attn"})) missing.push_back("-fa 1");
    if (missing.empty()) continue;
    sink.add(Verdict::kInfo, *f, c->line,
             fmt::format("llama-server without {}: 001 serves with -ngl 999 (every layer on the "
                         "GPU) and -fa 1 (flash attention)",
                         join(missing, " or ")));
  }
}

}  // namespace

const CheckInfo& l35_llama_cpp_arch() {
  static constexpr CheckInfo kInfo{
      .id = "L35",
      .title = "llama.cpp built without GB10's architecture",
      .reads = "cmake lines and CMakeCache.txt: CMAKE_CUDA_ARCHITECTURES of a GGML_CUDA build",
      .symptom = "llama.cpp fails with \"no kernel image\" or falls back to slow paths",
      .cause = "CMAKE_CUDA_ARCHITECTURES decides which GPUs get code.",
      .how_checked =
          "Looks for a GGML_CUDA build whose CMAKE_CUDA_ARCHITECTURES has no 12x or "
          "native, on a Spark.",
      .fix = "-DCMAKE_CUDA_ARCHITECTURES=121.",
      .source = "001",
      .keywords = "llama.cpp cmake_cuda_architectures 121 ggml build",
      .lint = &l35,
  };
  return kInfo;
}

const CheckInfo& l36_force_cublas() {
  static constexpr CheckInfo kInfo{
      .id = "L36",
      .title = "GGML_CUDA_FORCE_CUBLAS=ON on GB10",
      .reads = "cmake lines and CMakeCache.txt",
      .symptom = "llama.cpp produces garbage output on a Spark",
      .cause = "The forced cuBLAS path misbehaves on GB10 Blackwell.",
      .how_checked = "Looks for GGML_CUDA_FORCE_CUBLAS switched on, on a Spark.",
      .fix = "Leave GGML_CUDA_FORCE_CUBLAS OFF.",
      .source = "001",
      .keywords = "ggml_cuda_force_cublas cublas garbage gibberish nonsense output llama.cpp",
      .lint = &l36,
  };
  return kInfo;
}

const CheckInfo& l37_no_mmap() {
  static constexpr CheckInfo kInfo{
      .id = "L37",
      .title = "llama-server without --no-mmap",
      .reads = "llama-server command lines",
      .symptom = "Model load takes minutes; the page cache fills the unified pool",
      .cause = "Loading through mmap reads the model into the page cache first.",
      .how_checked = "Looks for llama-server lines without --no-mmap.",
      .fix = "llama-server --no-mmap ...",
      .source = "001",
      .keywords = "llama-server no-mmap mmap load time slow",
      .lint = &l37,
  };
  return kInfo;
}

const CheckInfo& l38_jinja_template() {
  static constexpr CheckInfo kInfo{
      .id = "L38",
      .title = "--jinja serves Qwen3.5 with its thinking template",
      .reads = "llama-server command lines and the model they serve",
      .symptom = "Answers start with long reasoning_content; tokens are wasted",
      .cause = "--jinja uses the model's embedded chat template, which enables thinking.",
      .how_checked = "Looks for --jinja when the model is a Qwen3.5.",
      .fix = "--chat-template chatml.",
      .source = "001",
      .keywords = "jinja chat-template chatml reasoning_content thinking qwen",
      .lint = &l38,
  };
  return kInfo;
}

const CheckInfo& l39_context_size() {
  static constexpr CheckInfo kInfo{
      .id = "L39",
      .title = "A llama.cpp context larger than 16384",
      .reads = "llama-server command lines",
      .symptom = "Decode is about 30% slower than expected",
      .cause = "A larger KV cache costs decode speed on a GB10's bandwidth.",
      .how_checked = "Looks for --ctx-size above 16384.",
      .fix = "--ctx-size 16384 or the smallest that fits the task.",
      .source = "001",
      .keywords = "ctx-size context size decode slow 32768 16384",
      .lint = &l39,
  };
  return kInfo;
}

const CheckInfo& l40_offload_flash_attention() {
  static constexpr CheckInfo kInfo{
      .id = "L40",
      .title = "llama-server without full offload or flash attention",
      .reads = "llama-server command lines",
      .symptom = "Low tokens per second; layers run on the CPU",
      .cause = "-ngl decides how many layers go to the GPU; -fa switches flash attention on.",
      .how_checked = "Looks for llama-server lines without -ngl or -fa.",
      .fix = "-ngl 999 -fa 1.",
      .source = "001",
      .keywords = "ngl n-gpu-layers fa flash-attn offload llama-server slow",
      .lint = &l40,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
