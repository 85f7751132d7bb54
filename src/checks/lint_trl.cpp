// Lint rules L15-L20: the trainer's configuration (001 "Training Configuration", "Dataset and
// Tokenizer Fixes"; 000 §8). Each rule opens with its rule.
#include <fmt/format.h>

#include "checks/lint.h"
#include "checks/lint_helpers.h"

namespace sparkdoc::checks {
namespace {

using job::PyValue;

// The configuration object a trainer call gets: args=..., followed to its assignment.
const job::PyCall* trainer_args(const job::JobFile& f, const job::PyCall& trainer) {
  const PyValue* v = lint::resolved(f, trainer.keyword("args"), trainer.line);
  if (v == nullptr) v = lint::resolved(f, trainer.positional(1), trainer.line);
  if (v == nullptr || v->kind != PyValue::Kind::kCall || !v->call) return nullptr;
  return v->call.get();
}

bool is_training_config(const job::PyCall& c) {
  return lint::constructs(c, {"SFTConfig", "TrainingArguments", "Seq2SeqTrainingArguments",
                              "GRPOConfig", "DPOConfig", "ORPOConfig", "KTOConfig"});
}

// L15 SFTTrainer with plain TrainingArguments (001): SFT fields (dataset_text_field,
// max_seq_length, packing) are silently ignored.
//   WARN  SFTTrainer whose args is a TrainingArguments.
void l15(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!lint::constructs(c, {"SFTTrainer"})) return;
    const job::PyCall* args = trainer_args(f, c);
    if (args == nullptr || !lint::constructs(*args, {"TrainingArguments"})) return;
    sink.add(Verdict::kWarn, f, c.line,
             "SFTTrainer with plain TrainingArguments: SFT fields such as dataset_text_field, "
             "max_seq_length and packing may be silently ignored; use trl.SFTConfig (001)");
  });
}

// L16 warmup_ratio (001): deprecated in transformers 5; warmup_steps is the supported field.
//   WARN  warmup_ratio in a training configuration.
void l16(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!is_training_config(c) || c.keyword("warmup_ratio") == nullptr) return;
    sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword("warmup_ratio")),
             "warmup_ratio is deprecated in transformers 5: give warmup_steps instead "
             "(e.g. warmup_steps=5) (001)");
  });
}

// L17 A sequence length past what fits on a Spark for the model (001: Qwen3.5-35B-A3B trains at
// max_seq_length=2048 with batch 2; 8192 runs out of memory in the backward pass).
//   WARN  max_seq_length (or TRL's max_length) above the validated length, for a known family,
//         on a Spark.
void l17(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    const bool config = is_training_config(c) || lint::is_model_load(c);
    if (!config) return;
    const ModelFamily* family = lint::file_model_family(f);
    if (family == nullptr || !family->seq_validated) return;
    for (std::string_view key : {"max_seq_length", "max_length"}) {
      const PyValue* v = lint::resolved(f, c.keyword(key), c.line);
      if (v == nullptr || v->kind != PyValue::Kind::kInt) continue;
      if (v->integer <= *family->seq_validated) continue;
      sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword(key)),
               fmt::format("{}={} for {}: {} is the length validated on a GB10{}; check the fit "
                           "with `sparkdoc plan` before a long run ({})",
                           key, v->integer, family->name, *family->seq_validated,
                           family->seq_oom ? fmt::format(", and {} ran out of memory in the "
                                                         "backward pass",
                                                         *family->seq_oom)
                                           : "",
                           family->source));
    }
  });
}

// L18 Sequence packing (001): for entity extraction and other structured tasks it lets the model
// see several documents as one sequence.
//   INFO  packing=True.
void l18(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (!is_training_config(c)) return;
    const PyValue* v = c.keyword("packing");
    if (v == nullptr || !v->is_true()) return;
    sink.add(Verdict::kInfo, f, lint::line_of(c, v),
             "packing=True joins several samples into one sequence: for entity extraction and "
             "other structured tasks it mixes documents up; 001 trains with packing=False");
  });
}

// L19 Dataset processes that fork (001): the Rust tokenizers' threads do not survive fork, so
// dataset.map(num_proc > 1) and dataset_num_proc > 1 deadlock.
//   WARN  num_proc or dataset_num_proc above 1.
void l19(const job::Job& job, const LintContext&, LintSink& sink) {
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    for (std::string_view key : {"num_proc", "dataset_num_proc"}) {
      const PyValue* v = lint::resolved(f, c.keyword(key), c.line);
      if (v == nullptr || v->kind != PyValue::Kind::kInt || v->integer <= 1) continue;
      if (key == "dataset_num_proc" && !is_training_config(c)) continue;
      if (key == "num_proc" && c.method() != "map" && c.method() != "filter" &&
          c.method() != "load_dataset") {
        continue;
      }
      sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword(key)),
               fmt::format("{}={} forks worker processes, and the tokenizers' threads deadlock in "
                           "forked children: use {}=1, or set TOKENIZERS_PARALLELISM=false (001)",
                           key, v->integer, key));
    }
  });
}

// L20 Gradient checkpointing switched on through the trainer for Nemotron-H (000 §8):
// transformers 5.5.3's NemotronHForCausalLM sets supports_gradient_checkpointing = False, so
// gradient_checkpointing=True raises ValueError, although every NemotronHBlock is a
// GradientCheckpointingLayer. (transformers 5.17 sets the flag True.)
//   WARN  gradient_checkpointing=True in a training configuration, or
//         gradient_checkpointing_enable(), in a script that loads Nemotron-H.
void l20(const job::Job& job, const LintContext&, LintSink& sink) {
  constexpr std::string_view kText =
      "with transformers before 5.17 NemotronHForCausalLM refuses gradient checkpointing "
      "(supports_gradient_checkpointing = False: ValueError) although its blocks support it: "
      "enable it on the model instead, model._set_gradient_checkpointing(enable=True, "
      "gradient_checkpointing_func=functools.partial(torch.utils.checkpoint.checkpoint, "
      "use_reentrant=False)) (000 §8; through PEFT: model.base_model.model), and keep "
      "gradient_checkpointing=False in the trainer's config";
  // The model family is looked up only for a call that asks for checkpointing: it reads the
  // whole file, and doing that for every call is quadratic in a large file.
  auto nemotron = [](const job::JobFile& f) {
    const ModelFamily* family = lint::file_model_family(f);
    return family != nullptr && family->model_type == "nemotron_h";
  };
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    if (is_training_config(c)) {
      const PyValue* v = c.keyword("gradient_checkpointing");
      if (v != nullptr && v->is_true() && nemotron(f)) {
        sink.add(Verdict::kWarn, f, lint::line_of(c, v), std::string(kText));
      }
    } else if (c.method() == "gradient_checkpointing_enable" && nemotron(f)) {
      sink.add(Verdict::kWarn, f, c.line, std::string(kText));
    }
  });
}

}  // namespace

const CheckInfo& l15_sft_trainer_arguments() {
  static constexpr CheckInfo kInfo{
      .id = "L15",
      .title = "SFTTrainer with plain TrainingArguments",
      .reads = "Python scripts: SFTTrainer and the configuration it gets",
      .symptom = "dataset_text_field, max_seq_length or packing have no effect",
      .cause =
          "SFTTrainer's own fields live on SFTConfig; plain TrainingArguments does not "
          "carry them.",
      .how_checked = "Follows SFTTrainer's args= to the object the script built.",
      .fix = "Build the configuration with trl.SFTConfig.",
      .source = "001",
      .keywords = "sfttrainer sftconfig trainingarguments trl ignored dataset_text_field",
      .lint = &l15,
  };
  return kInfo;
}

const CheckInfo& l16_warmup_ratio() {
  static constexpr CheckInfo kInfo{
      .id = "L16",
      .title = "warmup_ratio is deprecated in transformers 5",
      .reads = "Python scripts: training configurations",
      .symptom = "A deprecation warning; a later release drops the field",
      .cause = "transformers 5 deprecates warmup_ratio in favour of warmup_steps.",
      .how_checked = "Looks for warmup_ratio in SFTConfig, TrainingArguments and the like.",
      .fix = "warmup_steps=N.",
      .source = "001",
      .keywords = "warmup_ratio warmup_steps deprecated transformers 5",
      .lint = &l16,
  };
  return kInfo;
}

const CheckInfo& l17_sequence_length() {
  static constexpr CheckInfo kInfo{
      .id = "L17",
      .title = "A sequence length past what fits on a Spark for this model",
      .reads = "Python scripts: max_seq_length / max_length and the model loaded",
      .symptom = "Out of memory in the first backward pass",
      .cause =
          "Activation memory grows with the sequence length; for Qwen3.5-35B-A3B 2048 at "
          "batch 2 fits on a GB10 and 8192 does not.",
      .how_checked =
          "Compares the length with the recipes' validated length for the model "
          "family, on a Spark.",
      .fix = "Use the validated length, or check another with `sparkdoc plan MODEL --seq N`.",
      .source = "001",
      .keywords = "max_seq_length max_length sequence length oom backward 8192 2048",
      .lint = &l17,
  };
  return kInfo;
}

const CheckInfo& l18_packing() {
  static constexpr CheckInfo kInfo{
      .id = "L18",
      .title = "Sequence packing for a structured task",
      .reads = "Python scripts: training configurations",
      .symptom = "Entities or answers from one document show up in another",
      .cause = "Packing joins several samples into one sequence.",
      .how_checked = "Looks for packing=True.",
      .fix = "packing=False for extraction and other structured tasks.",
      .source = "001",
      .keywords = "packing sequence packing cross-document entity confusion",
      .lint = &l18,
  };
  return kInfo;
}

const CheckInfo& l19_dataset_processes() {
  static constexpr CheckInfo kInfo{
      .id = "L19",
      .title = "Dataset workers that fork next to the tokenizers' threads",
      .reads = "Python scripts: dataset.map/filter num_proc, dataset_num_proc",
      .symptom = "dataset.map or the trainer's preprocessing hangs forever",
      .cause = "The Rust tokenizers' thread pool does not survive fork; forked workers deadlock.",
      .how_checked = "Looks for num_proc or dataset_num_proc above 1.",
      .fix = "num_proc=1 / dataset_num_proc=1, or TOKENIZERS_PARALLELISM=false.",
      .source = "001",
      .keywords = "num_proc dataset_num_proc fork deadlock hang tokenizers map",
      .lint = &l19,
  };
  return kInfo;
}

const CheckInfo& l20_nemotron_checkpointing() {
  static constexpr CheckInfo kInfo{
      .id = "L20",
      .title = "Gradient checkpointing through the trainer on Nemotron-H",
      .reads =
          "Python scripts: gradient_checkpointing in training configurations, "
          "gradient_checkpointing_enable, the model loaded",
      .symptom = "ValueError: NemotronHForCausalLM does not support gradient checkpointing",
      .cause =
          "transformers 5.5.3 sets supports_gradient_checkpointing = False on the class "
          "although every NemotronHBlock is a GradientCheckpointingLayer (5.17 sets True).",
      .how_checked =
          "Looks for gradient_checkpointing=True or gradient_checkpointing_enable() in a "
          "script that loads Nemotron-H.",
      .fix =
          "Enable it on the model: sparkdoc.fixes.enable_gradient_checkpointing(model, args) "
          "applies 000 §8's bypass only where the installed transformers needs it and warns of "
          "a config that enables it again (docs/PYTHON.md); by hand, "
          "model._set_gradient_checkpointing(enable=True, gradient_checkpointing_func="
          "functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=False)); keep "
          "gradient_checkpointing=False in the config.",
      .source = "000 §8",
      .keywords =
          "gradient checkpointing nemotron valueerror supports_gradient_checkpointing "
          "does not support",
      .lint = &l20,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
