// Lint rules L41-L42: the versions a job pins against what the recipes validated for its model
// family (checks/model_families.h), and what its optimiser needs. Each rule opens with its rule.
#include <fmt/format.h>

#include <map>

#include "checks/lint.h"
#include "checks/lint_helpers.h"
#include "core/names.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

struct PinSeen {
  std::string version;
  const job::JobFile* file = nullptr;
  uint32_t line = 0;
};

// Every exact version the job pins: requirement files, pyproject, uv.lock, and
// `pip install name==version` lines. The first place a package is pinned wins.
std::map<std::string, PinSeen> job_pins(const job::Job& job) {
  std::map<std::string, PinSeen> out;
  for (const job::JobFile& f : job.files) {
    for (const job::Requirement& r : f.requirements) {
      if (auto v = r.pinned()) out.emplace(r.name, PinSeen{*v, &f, r.line});
    }
  }
  for (const lint::Install& in : lint::installs(job)) {
    for (const std::string& w : in.command->argv) {
      size_t eq = w.find("==");
      if (eq == std::string::npos || eq == 0) continue;
      std::string name = pep503_name(w.substr(0, w.find('[') < eq ? w.find('[') : eq));
      out.emplace(name, PinSeen{w.substr(eq + 2), in.file, in.command->line});
    }
  }
  return out;
}

const ModelFamily* job_family(const job::Job& job) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kPython) continue;
    if (const ModelFamily* family = lint::file_model_family(f); family && !family->stacks.empty()) {
      return family;
    }
  }
  return nullptr;
}

// "2.11.0+cu130" pins match "2.11.0+cu130"; a pin without a local label matches its release.
bool same_version(std::string_view pinned, std::string_view validated) {
  if (pinned == validated) return true;
  return pinned == validated.substr(0, validated.find('+'));
}

// L41 Pins against the validated stack of the job's model family (000 §2; 001). Nemotron-H was
// validated with transformers 5.5.3, peft 0.14.0, trl 0.15.2, accelerate 1.3.0; Qwen3.5 MoE with
// transformers 5.2.0 + Unsloth 2026.3.4 or 5.3.0 + 2026.3.17, PEFT 0.18.1, torch 2.11.0+cu130.
// One pin for every model (5.5.3) would break 001's Unsloth pairing.
//   WARN  each pin of a stack package that differs from the validated stack it is closest to.
void l41(const job::Job& job, const LintContext&, LintSink& sink) {
  const ModelFamily* family = job_family(job);
  if (family == nullptr) return;
  auto pins = job_pins(job);
  const ValidatedStack* best = nullptr;
  int best_matches = -1;
  for (const ValidatedStack& stack : family->stacks) {
    int matches = 0;
    for (const Pin& p : stack.pins) {
      auto it = pins.find(std::string(p.package));
      if (it != pins.end() && same_version(it->second.version, p.version)) ++matches;
    }
    if (matches > best_matches) {
      best = &stack;
      best_matches = matches;
    }
  }
  if (best == nullptr) return;
  for (const Pin& p : best->pins) {
    auto it = pins.find(std::string(p.package));
    if (it == pins.end() || same_version(it->second.version, p.version)) continue;
    std::vector<std::string> stack_text;
    for (const Pin& q : best->pins)
      stack_text.push_back(fmt::format("{} {}", q.package, q.version));
    sink.add(Verdict::kWarn, *it->second.file, it->second.line,
             fmt::format("{} {} is pinned for {}, which was validated with {} {} ({}: {})",
                         p.package, it->second.version, family->name, p.package, p.version,
                         best->label, join(stack_text, ", ")));
  }
}

// L42 An 8-bit optimiser without bitsandbytes (001): optim="adamw_8bit" needs bitsandbytes,
// which 001 installs for the optimiser alone (not for quantisation).
//   WARN  an 8-bit optim in a job whose dependency files or installs never name bitsandbytes.
void l42(const job::Job& job, const LintContext&, LintSink& sink) {
  bool has_dependencies = false;
  bool has_bnb = false;
  for (const job::JobFile& f : job.files) {
    for (const job::Requirement& r : f.requirements) {
      has_dependencies = true;
      has_bnb = has_bnb || r.name == "bitsandbytes";
    }
  }
  for (const lint::Install& in : lint::installs(job)) {
    has_dependencies = true;
    has_bnb = has_bnb || in.names("bitsandbytes") ||
              in.command->text.find("bitsandbytes") != std::string::npos;
  }
  if (!has_dependencies || has_bnb) return;
  lint::for_each_call(job, [&](const job::JobFile& f, const job::PyCall& c) {
    const job::PyValue* optim = lint::resolved(f, c.keyword("optim"), c.line);
    if (optim == nullptr) return;
    auto name = optim->string();
    if (!name || name->find("8bit") == std::string::npos) return;
    sink.add(Verdict::kWarn, f, lint::line_of(c, c.keyword("optim")),
             fmt::format("optim=\"{}\" needs bitsandbytes, which none of the job's dependency "
                         "files or installs names: add it (001 installs it for the optimiser)",
                         *name));
  });
}

}  // namespace

const CheckInfo& l41_validated_stack() {
  static constexpr CheckInfo kInfo{
      .id = "L41",
      .title = "Pinned versions that differ from the model family's validated stack",
      .reads =
          "requirements files, pyproject.toml, uv.lock, pip install pins; the model the "
          "scripts load",
      .symptom =
          "The model is not recognised, loads with warnings, or Unsloth and transformers "
          "disagree",
      .cause =
          "Model support and Unsloth releases are tied to specific transformers releases; "
          "the recipes validated one stack per family.",
      .how_checked =
          "Finds the job's model family and compares each pinned stack package with "
          "the validated stack it is closest to.",
      .fix =
          "Pin the family's validated stack: Nemotron-H transformers 5.5.3, peft 0.14.0, trl "
          "0.15.2, accelerate 1.3.0; Qwen3.5 MoE transformers 5.2.0 with Unsloth 2026.3.4 or "
          "5.3.0 with 2026.3.17, PEFT 0.18.1.",
      .source = "000 §2; 001",
      .keywords =
          "pin version transformers peft trl accelerate unsloth stack lockfile uv.lock "
          "requirements compatibility",
      .lint = &l41,
  };
  return kInfo;
}

const CheckInfo& l42_bitsandbytes_optimizer() {
  static constexpr CheckInfo kInfo{
      .id = "L42",
      .title = "An 8-bit optimiser without bitsandbytes",
      .reads = "Python scripts: optim=; the job's dependency files and installs",
      .symptom = "The trainer fails at the first step: bitsandbytes is not installed",
      .cause = "adamw_8bit and the other 8-bit optimisers come from bitsandbytes.",
      .how_checked =
          "Looks for an 8-bit optim where the job's dependencies never name "
          "bitsandbytes.",
      .fix = "Add bitsandbytes to the job's dependencies.",
      .source = "001",
      .keywords = "adamw_8bit optim bitsandbytes 8bit optimizer missing",
      .lint = &l42,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
