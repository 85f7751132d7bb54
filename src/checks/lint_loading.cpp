// Lint rules L1-L7: how a training script loads its model and tokenizer (000 §3, 001 "The UMA
// OOM Problem", "Do Not Use device_map='auto'"). Each rule opens with its rule.
#include <fmt/format.h>

#include "checks/lint.h"
#include "checks/lint_helpers.h"

namespace sparkdoc::checks {
namespace {

using job::PyValue;

// L1 trust_remote_code=True for a model transformers supports natively (000 §2-§3): the
// repository's own code is run instead of transformers' class. For Nemotron-H that code has the
// old, broken KV cache: wrong output. For other families: it is needed only for architectures
// transformers lacks.
//   FAIL  a Nemotron-H load; WARN another known family with native support; INFO otherwise,
//         and for a tokenizer load (the bundled modeling code does not run there).
void l1(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    const bool model = lint::is_model_load(c);
    if (!model && !lint::is_tokenizer_load(c)) return;
    const PyValue* v = c.keyword("trust_remote_code");
    if (v == nullptr || !v->is_true()) return;
    const ModelFamily* family = model ? lint::file_model_family(f) : nullptr;
    if (family != nullptr && family->model_type == "nemotron_h") {
      sink.add(Verdict::kFail, f, lint::line_of(c, v),
               "trust_remote_code=True runs the model repository's own Nemotron-H code, whose KV "
               "cache is the old broken one (wrong inference results); transformers 5.5.3 and "
               "later have NemotronHForCausalLM natively: drop trust_remote_code");
    } else if (family != nullptr && !family->native_since.empty()) {
      sink.add(
          Verdict::kWarn, f, lint::line_of(c, v),
          fmt::format("trust_remote_code=True runs the repository's code although transformers "
                      "{} and later support {} natively: drop it unless you need that code",
                      family->native_since, family->name));
    } else {
      sink.add(Verdict::kInfo, f, lint::line_of(c, v),
               "trust_remote_code=True runs code from the model repository; it is needed only for "
               "architectures transformers does not support natively");
    }
  });
}

// L2 torch_dtype= in a load (000 §3): deprecated in transformers 5 in favour of dtype=.
//   WARN  every load that passes torch_dtype.
void l2(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c) || c.keyword("torch_dtype") == nullptr) return;
    sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword("torch_dtype")),
             "torch_dtype= is deprecated since transformers 5 (and warns on every load): pass "
             "dtype= instead, e.g. dtype=torch.bfloat16");
  });
}

// L3 low_cpu_mem_usage=False (000 §3): transformers 4.x then allocates the whole model in CPU
// memory before streaming the weights in, which with the mmap'd shards exceeds a Spark's memory
// halfway through. transformers 5 always builds the model on the meta device.
//   WARN  low_cpu_mem_usage=False in a load.
void l3(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c)) return;
    const PyValue* v = c.keyword("low_cpu_mem_usage");
    if (v == nullptr || !v->is_false()) return;
    sink.add(Verdict::kWarn, f, lint::line_of(c, v),
             "low_cpu_mem_usage=False makes transformers 4.x build the whole model in CPU memory "
             "first (~57 GB for a 30B model) while the shards are mapped: out of memory halfway "
             "through on unified memory (000 §3); drop it (transformers 5 always loads through "
             "the meta device)");
  });
}

// L4 device_map="auto" (001): accelerate's get_balanced_memory runs distributed-mode checks that
// fail on this single-GPU platform, and a Spark has one device anyway.
//   WARN  on a Spark; nothing elsewhere.
void l4(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c)) return;
    const PyValue* v = lint::resolved(f, c.keyword("device_map"), c.line);
    if (v == nullptr || v->string() != "auto") return;
    sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword("device_map")),
             "device_map=\"auto\" goes through accelerate's get_balanced_memory, whose "
             "distributed checks fail on a single-GPU Spark: use device_map={\"\": 0} (or let "
             "Unsloth's FastModel place the model)");
  });
}

// L5 Settings presented as fixes for the out of memory during loading that change nothing
// (001: "none change the underlying mmap behavior"): device_map="sequential",
// offload_state_dict=True, SAFETENSORS_FAST_GPU=1. The last has been a no-op since safetensors
// 0.3.0 (PR #184), whatever its documentation still says.
//   WARN  each, with what does fix it.
void l5(const job::Job& job, const LintContext&, LintSink& sink) {
  constexpr std::string_view kFix =
      "the load peak comes from mmap'd pages and CUDA tensors sharing one pool; what fixes it: "
      "sparkdoc.patch_transformers() (or disable_mmap=True where transformers has it), or "
      "`sparkdoc run --drop-cache-every 20s`";
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c)) return;
    if (const PyValue* v = c.keyword("device_map"); v != nullptr && v->string() == "sequential") {
      sink.add(
          Verdict::kWarn, f, lint::line_of(c, v),
          fmt::format("device_map=\"sequential\" does not change how shards are read (001): {}",
                      kFix));
    }
    if (const PyValue* v = c.keyword("offload_state_dict"); v != nullptr && v->is_true()) {
      sink.add(Verdict::kWarn, f, lint::line_of(c, v),
               fmt::format("offload_state_dict=True does not change how shards are read (001): {}",
                           kFix));
    }
  });
  const std::string fast = fmt::format(
      "SAFETENSORS_FAST_GPU has been a no-op since safetensors 0.3.0 (PR #184 removed the code "
      "that read it): {}",
      kFix);
  for (const job::JobFile& f : job.files) {
    for (const job::PyAssignment& a : f.python.assignments) {
      if (a.target.find("SAFETENSORS_FAST_GPU") != std::string::npos) {
        sink.add(Verdict::kWarn, f, a.line, fast);
      }
    }
    for (const job::DockerInstruction& d : f.docker) {
      if ((d.keyword == "ENV" || d.keyword == "ARG") &&
          d.args.find("SAFETENSORS_FAST_GPU") != std::string::npos) {
        sink.add(Verdict::kWarn, f, d.line, fast);
      }
    }
    // Shell lines, a Dockerfile's RUN steps among them (its ENV and ARG are read above).
    for (const job::Command& c : f.commands) {
      if (c.env_value("SAFETENSORS_FAST_GPU") ||
          c.text.find("SAFETENSORS_FAST_GPU") != std::string::npos) {
        sink.add(Verdict::kWarn, f, c.line, fast);
      }
    }
  }
}

bool loads_in_4bit(const job::JobFile& f, const job::PyCall& c) {
  if (const PyValue* v = c.keyword("load_in_4bit"); v != nullptr && v->is_true()) return true;
  const PyValue* q = lint::resolved(f, c.keyword("quantization_config"), c.line);
  if (q == nullptr || q->kind != PyValue::Kind::kCall || !q->call) return false;
  const PyValue* inner = q->call->keyword("load_in_4bit");
  return inner != nullptr && inner->is_true();
}

// L6 4-bit loading of a large MoE on unified memory (001; 002 G3): bitsandbytes' quantisation
// makes transient buffers on top of the mmap'd pages, so QLoRA runs out of memory earlier than
// bf16 (001: at ~4% of loading against 66%), and Unsloth warns against QLoRA for Qwen3.5 MoE.
//   WARN  load_in_4bit=True (or a BitsAndBytesConfig with it) for an MoE on a Spark.
void l6(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::is_model_load(c) || !loads_in_4bit(f, c)) return;
    const ModelFamily* family = lint::file_model_family(f);
    if (family == nullptr || !family->moe) return;
    const PyValue* at = c.keyword("load_in_4bit");
    if (at == nullptr) at = c.keyword("quantization_config");
    sink.add(Verdict::kWarn, f, lint::line_of(c, at),
             fmt::format("4-bit loading of {} on unified memory runs out of memory earlier than "
                         "bf16 (001: at ~4% of the load; quantisation buffers come on top of the "
                         "mapped shards) and Unsloth advises against QLoRA for MoE: load in bf16 "
                         "(load_in_4bit=False) and train LoRA",
                         family->name));
  });
}

// L7 A tokenizer without a pad token (000 §3): causal-LM tokenizers often have none, and
// batching or the trainer's collator then fails or pads with a wrong id.
//   INFO  a script that loads a tokenizer and trains but never sets `pad_token`.
void l7(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kPython) continue;
    const job::PyCall* tokenizer = nullptr;
    bool trains = false;
    for (const job::PyCall& c : f.python.calls) {
      if (lint::is_tokenizer_load(c) && tokenizer == nullptr) tokenizer = &c;
      if (lint::constructs(c, {"Trainer", "SFTTrainer", "Seq2SeqTrainer"})) trains = true;
    }
    if (tokenizer == nullptr || !trains) continue;
    bool sets = false;
    for (const job::PyAssignment& a : f.python.assignments) {
      sets = sets || a.target.ends_with(".pad_token") || a.target.ends_with(".pad_token_id");
    }
    for (const job::PyCall& c : f.python.calls) {
      sets = sets || c.method() == "add_special_tokens";
    }
    if (sets) continue;
    sink.add(
        Verdict::kInfo, f, tokenizer->line,
        "the tokenizer's pad token is never set: if it has none, batches fail or pad with a "
        "wrong id; `if tokenizer.pad_token is None: tokenizer.pad_token = tokenizer.eos_token` "
        "(000 §3)");
  }
}

}  // namespace

const CheckInfo& l1_trust_remote_code() {
  static constexpr CheckInfo kInfo{
      .id = "L1",
      .title = "trust_remote_code=True for a model transformers supports natively",
      .reads = "Python scripts: from_pretrained calls and the model they load",
      .symptom = "A Nemotron-H model gives wrong or degenerate output although it loaded fine",
      .cause =
          "trust_remote_code=True runs the model repository's bundled code instead of "
          "transformers' own class; Nemotron-H's bundled code has the old, broken KV cache.",
      .how_checked =
          "Looks for trust_remote_code=True in model and tokenizer loads and names the "
          "model family from the id the script loads.",
      .fix =
          "Drop trust_remote_code=True with transformers 5.5.3 or newer, which has "
          "NemotronHForCausalLM natively.",
      .source = "000 §2-§3",
      .keywords = "trust_remote_code remote code nemotron kv cache wrong output bundled",
      .lint = &l1,
  };
  return kInfo;
}

const CheckInfo& l2_torch_dtype() {
  static constexpr CheckInfo kInfo{
      .id = "L2",
      .title = "torch_dtype= is deprecated in transformers 5",
      .reads = "Python scripts: from_pretrained calls",
      .symptom = "A deprecation warning on every load; a later transformers release rejects it",
      .cause = "transformers 5 renamed from_pretrained's torch_dtype argument to dtype.",
      .how_checked = "Looks for torch_dtype= in model loads.",
      .fix = "Pass dtype=torch.bfloat16 instead of torch_dtype=.",
      .source = "000 §3",
      .keywords = "torch_dtype dtype deprecated deprecation warning transformers 5",
      .lint = &l2,
  };
  return kInfo;
}

const CheckInfo& l3_low_cpu_mem_usage() {
  static constexpr CheckInfo kInfo{
      .id = "L3",
      .title = "low_cpu_mem_usage=False",
      .reads = "Python scripts: from_pretrained calls",
      .symptom = "Out of memory halfway through loading a 30B model on a Spark",
      .cause =
          "With low_cpu_mem_usage=False, transformers 4.x allocates the whole model as CPU "
          "tensors first and then streams the weights in; with the mapped shards this "
          "exceeds unified memory.",
      .how_checked = "Looks for low_cpu_mem_usage=False in model loads.",
      .fix =
          "Drop it (transformers 5 always initialises on the meta device) or set it True on "
          "transformers 4.x.",
      .source = "000 §3",
      .keywords = "low_cpu_mem_usage meta device empty model cpu oom loading halfway",
      .lint = &l3,
  };
  return kInfo;
}

const CheckInfo& l4_device_map_auto() {
  static constexpr CheckInfo kInfo{
      .id = "L4",
      .title = "device_map=\"auto\" on a Spark",
      .reads = "Python scripts: from_pretrained calls",
      .symptom =
          "Loading fails in accelerate's distributed checks, or offloads to CPU on a "
          "single-GPU Spark",
      .cause =
          "device_map=\"auto\" calls accelerate's get_balanced_memory, whose distributed-mode "
          "checks are incompatible with this platform.",
      .how_checked = "Looks for device_map=\"auto\" in model loads, on a Spark.",
      .fix =
          "Use device_map={\"\": 0}, or Unsloth's FastModel.from_pretrained, which places the "
          "model itself.",
      .source = "001",
      .keywords = "device_map auto get_balanced_memory accelerate distributed offload",
      .lint = &l4,
  };
  return kInfo;
}

const CheckInfo& l5_ineffective_oom_fixes() {
  static constexpr CheckInfo kInfo{
      .id = "L5",
      .title = "Settings that do not fix the out of memory while loading",
      .reads =
          "Python scripts, Dockerfiles, shell lines: device_map=\"sequential\", "
          "offload_state_dict, SAFETENSORS_FAST_GPU",
      .symptom = "The load still dies at about 66% of the shards after applying a suggested fix",
      .cause =
          "On unified memory the page cache of mmap'd shards and the CUDA tensors made from "
          "them share one pool; these settings do not change that. SAFETENSORS_FAST_GPU has "
          "been a no-op since safetensors 0.3.0.",
      .how_checked =
          "Looks for device_map=\"sequential\" and offload_state_dict=True in loads and "
          "for SAFETENSORS_FAST_GPU anywhere in the job.",
      .fix =
          "Load with sparkdoc.patch_transformers() (reads each shard once and releases its "
          "pages) or run under `sparkdoc run --drop-cache-every 20s`.",
      .source = "001; safetensors PR #184",
      .keywords =
          "sequential offload_state_dict safetensors_fast_gpu oom mmap page cache fix "
          "does not help",
      .lint = &l5,
  };
  return kInfo;
}

const CheckInfo& l6_qlora_moe() {
  static constexpr CheckInfo kInfo{
      .id = "L6",
      .title = "4-bit loading of an MoE on unified memory",
      .reads = "Python scripts: load_in_4bit and BitsAndBytesConfig in model loads",
      .symptom = "QLoRA runs out of memory at the very start of loading, earlier than bf16",
      .cause =
          "bitsandbytes' quantisation makes large transient buffers on top of the mmap'd "
          "pages; on unified memory both count against one pool.",
      .how_checked = "Looks for 4-bit loads of a model the script names as an MoE, on a Spark.",
      .fix = "Load in bf16 (load_in_4bit=False) and train LoRA; a Spark has the memory for it.",
      .source = "001; 002 G3",
      .keywords = "qlora 4bit load_in_4bit bitsandbytes quantization moe oom earlier",
      .lint = &l6,
  };
  return kInfo;
}

const CheckInfo& l7_pad_token() {
  static constexpr CheckInfo kInfo{
      .id = "L7",
      .title = "The tokenizer's pad token is never set",
      .reads = "Python scripts: tokenizer loads, trainers, pad_token assignments",
      .symptom =
          "Batching fails (\"Asking to pad but the tokenizer does not have a padding "
          "token\") or trains on padding with a wrong id",
      .cause = "Causal-LM tokenizers often define no pad token.",
      .how_checked =
          "Looks for a tokenizer load and a trainer in one script with no assignment "
          "to pad_token.",
      .fix = "if tokenizer.pad_token is None: tokenizer.pad_token = tokenizer.eos_token",
      .source = "000 §3",
      .keywords = "pad_token padding token tokenizer eos asking to pad",
      .lint = &l7,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
