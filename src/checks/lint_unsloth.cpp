// Lint rules L8-L14: Unsloth and PEFT on MoE models (001 "Use FastModel", "LoRA Configuration",
// "Runtime Monkey-Patches"; 000 §11). Each rule opens with its rule.
#include <fmt/format.h>

#include "checks/lint.h"
#include "checks/lint_helpers.h"

namespace sparkdoc::checks {
namespace {

using job::PyValue;

bool is_unsloth(const job::PyCall& c) {
  return c.callee.starts_with("unsloth.");
}

// L8 FastLanguageModel for an MoE (001): it is for dense models and handles expert layers
// incorrectly; FastModel is the MoE entry point.
//   WARN  FastLanguageModel.from_pretrained of a model the script names as an MoE.
void l8(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (c.callee != "unsloth.FastLanguageModel.from_pretrained") return;
    const ModelFamily* family = lint::file_model_family(f);
    if (family == nullptr || !family->moe) return;
    sink.add(Verdict::kWarn, f, c.line,
             fmt::format("FastLanguageModel is for dense models; for {} it warns about unsupported "
                         "layers and handles the experts incorrectly: use "
                         "`from unsloth import FastModel` and FastModel.from_pretrained (001)",
                         family->name));
  });
}

// Whether the LoRA targets reach an MoE's experts: the expert projections, or all-linear.
bool targets_experts(const PyValue* targets) {
  if (targets == nullptr) return true;  // the default targets of Unsloth reach them
  if (targets->string() == "all-linear") return true;
  for (const PyValue& t : targets->items) {
    auto s = t.string();
    if (s && (*s == "gate_proj" || *s == "up_proj" || *s == "down_proj" ||
              s->find("expert") != std::string::npos || *s == "w1" || *s == "w2" || *s == "w3")) {
      return true;
    }
  }
  return false;
}

// L9 lora_dropout other than 0 on an MoE's experts (001): PEFT's ParamWrapper, which adapts
// fused expert parameters, does not support dropout: errors or silently broken training.
//   FAIL  get_peft_model / LoraConfig with lora_dropout > 0 whose targets reach the experts of a
//         model the script names as an MoE.
void l9(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    bool peft = c.method() == "get_peft_model" || lint::constructs(c, {"LoraConfig"});
    if (!peft) return;
    const PyValue* dropout = lint::resolved(f, c.keyword("lora_dropout"), c.line);
    if (dropout == nullptr || !dropout->numeric() || *dropout->numeric() == 0.0) return;
    const ModelFamily* family = lint::file_model_family(f);
    if (family == nullptr || !family->moe) return;
    if (!targets_experts(lint::resolved(f, c.keyword("target_modules"), c.line))) return;
    sink.add(
        Verdict::kFail, f, lint::line_of(c, c.keyword("lora_dropout")),
        fmt::format("lora_dropout={} on the experts of {}: PEFT's ParamWrapper for fused "
                    "expert parameters does not support dropout (errors or silently broken "
                    "training); use lora_dropout=0.0, which also enables Unsloth's fast "
                    "patching (001)",
                    dropout->text.empty() ? fmt::format("{}", *dropout->numeric()) : dropout->text,
                    family->name));
  });
}

// L10 Unsloth's LoRA without its own gradient checkpointing (001): use_gradient_checkpointing=
// "unsloth" offloads activations and is the validated setting; True is standard checkpointing,
// False none at all.
//   INFO  FastModel / FastLanguageModel.get_peft_model with another value.
void l10(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!is_unsloth(c) || c.method() != "get_peft_model") return;
    const PyValue* v = lint::resolved(f, c.keyword("use_gradient_checkpointing"), c.line);
    if (v != nullptr && v->string() == "unsloth") return;
    if (v == nullptr) return;  // Unsloth's default is "unsloth"
    sink.add(Verdict::kInfo, f, lint::line_of(c, c.keyword("use_gradient_checkpointing")),
             "use_gradient_checkpointing is not \"unsloth\": Unsloth's own checkpointing is the "
             "memory-efficient, validated setting for LoRA on a Spark (001)");
  });
}

// L11 Installing Unsloth (000 §11; 001; 002 G9): unsloth_zoo must be installed before unsloth
// when unsloth comes from git (it is not pulled in), and in a pinned image both go in with
// --no-deps so that they do not replace the pinned transformers, peft, trl and torch.
// `uv add` has no --no-deps: it resolves unsloth together with the project's pins (001's uv.lock)
// and fails rather than replacing them.
//   WARN  pip install unsloth without --no-deps; unsloth from git with no earlier unsloth_zoo.
void l11(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const lint::Install& in : lint::installs(job)) {
    if (!in.names("unsloth")) continue;
    if (!in.no_deps && !in.command->has_pair("uv", "add")) {
      sink.add(Verdict::kWarn, *in.file, in.command->line,
               "pip install unsloth without --no-deps lets it replace the pinned transformers, "
               "peft, trl and torch: install unsloth and unsloth_zoo with --no-deps, then "
               "reinstall the pins (000 §11, 002 G9)");
    }
    const bool from_git = in.command->text.find("git+") != std::string::npos;
    if (!from_git || in.names("unsloth-zoo")) continue;
    bool zoo_before = false;
    for (const lint::Install& other : lint::installs(job)) {
      if (other.file == in.file && other.command->line < in.command->line &&
          other.names("unsloth-zoo")) {
        zoo_before = true;
      }
    }
    if (!zoo_before) {
      sink.add(Verdict::kWarn, *in.file, in.command->line,
               "unsloth from git does not pull in unsloth_zoo: install unsloth_zoo first (001)");
    }
  }
}

// L12 Importing Unsloth in a docker build step (000 §11): unsloth_zoo checks for a GPU at import
// time, and build steps see none: NotImplementedError fails the build.
//   FAIL  a Dockerfile RUN whose Python imports unsloth.
void l12(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kDockerfile) continue;
    for (const job::Command& c : f.commands) {
      bool python = !c.argv.empty() && c.argv[0].starts_with("python");
      if (!python) continue;
      for (const std::string& w : c.argv) {
        if (w.find("import unsloth") != std::string::npos ||
            w.find("from unsloth") != std::string::npos) {
          sink.add(Verdict::kFail, f, c.line,
                   "importing unsloth in a build step fails: unsloth_zoo checks for a GPU at "
                   "import time and `docker build` has none; verify the install with "
                   "`pip show unsloth unsloth_zoo` instead and import it at run time (000 §11)");
          break;
        }
      }
    }
  }
}

// L13 A processor passed as the tokenizer for text-only training of a vision-language model
// (001): image-processing code paths run, and generate() gets a BatchEncoding.
//   INFO  a trainer given processor= / tokenizer= / processing_class= an AutoProcessor or
//         *Processor load.
void l13(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kPython) continue;
    for (const job::PyCall& c : f.python.calls) {
      if (!lint::constructs(c, {"SFTTrainer", "Trainer"})) continue;
      for (std::string_view key : {"tokenizer", "processing_class"}) {
        const PyValue* v = lint::resolved(f, c.keyword(key), c.line);
        if (v == nullptr || v->kind != PyValue::Kind::kCall || !v->call) continue;
        if (v->call->callee.find("Processor") == std::string::npos) continue;
        sink.add(Verdict::kInfo, f, lint::line_of(c, c.keyword(key)),
                 fmt::format("{}= is a processor: for text-only training unwrap its text "
                             "tokenizer (`tokenizer = getattr(processor, \"tokenizer\", "
                             "processor)`) so no image path runs (001)",
                             key));
      }
    }
  }
}

// L14 Unsloth's fix_untrained_tokens on Qwen3.5 (001): its vocabulary is fully trained, and the
// scan only costs time; 001 replaces it with a no-op.
//   INFO  an Unsloth script for Qwen3.5 MoE that does not patch it.
void l14(const job::Job& job, const LintContext&, LintSink& sink) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kPython || !f.python.imports_from("unsloth")) continue;
    const ModelFamily* family = lint::file_model_family(f);
    if (family == nullptr || family->model_type != "qwen3_5_moe") continue;
    bool patched = false;
    for (const job::PyAssignment& a : f.python.assignments) {
      patched = patched || a.target.ends_with("fix_untrained_tokens");
    }
    if (patched) continue;
    uint32_t line = 0;
    for (const job::PyImport& i : f.python.imports) {
      if (i.qualified.starts_with("unsloth") && line == 0) line = i.line;
    }
    sink.add(Verdict::kInfo, f, line,
             "Qwen3.5's vocabulary is fully trained: `unsloth.tokenizer_utils.fix_untrained_tokens "
             "= lambda *a, **k: None` skips a scan that finds nothing (001)");
  }
}

}  // namespace

const CheckInfo& l8_fast_language_model_moe() {
  static constexpr CheckInfo kInfo{
      .id = "L8",
      .title = "FastLanguageModel for an MoE model",
      .reads = "Python scripts: Unsloth loads and the model they name",
      .symptom = "Unsloth warns about unsupported layer types; the experts are handled wrongly",
      .cause =
          "FastLanguageModel is Unsloth's entry point for dense models; MoE architectures "
          "need FastModel.",
      .how_checked = "Looks for FastLanguageModel.from_pretrained of a model named as an MoE.",
      .fix = "from unsloth import FastModel; FastModel.from_pretrained(...).",
      .source = "001",
      .keywords = "unsloth fastlanguagemodel fastmodel moe experts unsupported layer",
      .lint = &l8,
  };
  return kInfo;
}

const CheckInfo& l9_lora_dropout_moe() {
  static constexpr CheckInfo kInfo{
      .id = "L9",
      .title = "lora_dropout other than 0 on MoE experts",
      .reads = "Python scripts: get_peft_model and LoraConfig",
      .symptom = "An error about dropout in ParamWrapper, or training that silently goes nowhere",
      .cause =
          "PEFT adapts fused 3-D expert parameters with ParamWrapper, which does not support "
          "a nonzero lora_dropout.",
      .how_checked =
          "Looks for lora_dropout > 0 whose targets reach the experts of a model named "
          "as an MoE.",
      .fix = "lora_dropout=0.0 (it also enables Unsloth's fast patching of all layers).",
      .source = "001",
      .keywords = "lora_dropout dropout paramwrapper moe experts lora peft",
      .lint = &l9,
  };
  return kInfo;
}

const CheckInfo& l10_unsloth_checkpointing() {
  static constexpr CheckInfo kInfo{
      .id = "L10",
      .title = "Unsloth LoRA without Unsloth's gradient checkpointing",
      .reads = "Python scripts: Unsloth get_peft_model",
      .symptom = "More activation memory than the validated setting; OOM at longer sequences",
      .cause =
          "use_gradient_checkpointing=\"unsloth\" offloads activations; True is the standard "
          "implementation and False none.",
      .how_checked =
          "Looks for another value of use_gradient_checkpointing in Unsloth's "
          "get_peft_model.",
      .fix = "use_gradient_checkpointing=\"unsloth\".",
      .source = "001",
      .keywords = "use_gradient_checkpointing unsloth gradient checkpointing activations memory",
      .lint = &l10,
  };
  return kInfo;
}

const CheckInfo& l11_unsloth_install() {
  static constexpr CheckInfo kInfo{
      .id = "L11",
      .title = "Unsloth installed over the pinned stack, or without unsloth_zoo",
      .reads = "Dockerfiles, shell scripts, Makefiles: pip and uv install lines",
      .symptom =
          "After installing Unsloth, transformers, peft, trl or torch are other versions "
          "than pinned; or `import unsloth` fails for want of unsloth_zoo",
      .cause =
          "pip resolves Unsloth's own requirements over the pins; unsloth from git does not "
          "pull in unsloth_zoo.",
      .how_checked =
          "Looks for pip install unsloth without --no-deps, and git installs of unsloth "
          "with no unsloth_zoo before them.",
      .fix =
          "pip install unsloth unsloth_zoo --no-deps, then reinstall the pins with "
          "--force-reinstall --no-deps; install unsloth_zoo before unsloth from git.",
      .source = "000 §11; 001; 002 G9",
      .keywords = "unsloth unsloth_zoo install order no-deps pip pinned force-reinstall",
      .lint = &l11,
  };
  return kInfo;
}

const CheckInfo& l12_unsloth_import_in_build() {
  static constexpr CheckInfo kInfo{
      .id = "L12",
      .title = "Importing Unsloth in a docker build step",
      .reads = "Dockerfiles: RUN lines that run Python",
      .symptom = "docker build fails with NotImplementedError from unsloth_zoo's device_type.py",
      .cause = "unsloth_zoo checks for a GPU at import time; build steps run without a GPU.",
      .how_checked = "Looks for `import unsloth` / `from unsloth` in Python run by a RUN line.",
      .fix = "Check the install with `pip show unsloth unsloth_zoo`; import Unsloth at run time.",
      .source = "000 §11",
      .keywords = "unsloth import docker build notimplementederror gpu presence device_type",
      .lint = &l12,
  };
  return kInfo;
}

const CheckInfo& l13_processor_as_tokenizer() {
  static constexpr CheckInfo kInfo{
      .id = "L13",
      .title = "A vision-language processor used as the tokenizer for text-only training",
      .reads = "Python scripts: trainers and the processors given to them",
      .symptom = "Image-processing code runs for text; generate() fails on a BatchEncoding",
      .cause = "A processor wraps the text tokenizer with image handling.",
      .how_checked =
          "Looks for a trainer given a *Processor load as tokenizer= or "
          "processing_class=.",
      .fix = "tokenizer = getattr(processor, \"tokenizer\", processor).",
      .source = "001",
      .keywords = "processor tokenizer unwrap qwen3vlprocessor vision text-only batchencoding",
      .lint = &l13,
  };
  return kInfo;
}

const CheckInfo& l14_fix_untrained_tokens() {
  static constexpr CheckInfo kInfo{
      .id = "L14",
      .title = "Unsloth's fix_untrained_tokens on a fully trained vocabulary",
      .reads = "Python scripts: Unsloth imports, the model, assignments",
      .symptom = "Time spent at load scanning for untrained tokens that Qwen3.5 does not have",
      .cause = "Qwen3.5's vocabulary has no unused slots.",
      .how_checked = "Looks for an Unsloth script for Qwen3.5 MoE without the no-op patch.",
      .fix = "unsloth.tokenizer_utils.fix_untrained_tokens = lambda *args, **kwargs: None",
      .source = "001",
      .keywords = "fix_untrained_tokens unsloth tokenizer untrained qwen3.5 patch",
      .lint = &l14,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
