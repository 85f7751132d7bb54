// S8 transformers for the model family (000 §2, §3; 001).
//
// One pin for everyone is wrong: 000 validated Nemotron-H on transformers 5.5.3 (the first
// release with a native NemotronHForCausalLM including the KV-cache fix), while 001 validated
// Qwen3.5-35B-A3B with Unsloth 2026.3.4 on transformers 5.2.0 (or 2026.3.17 on 5.3.0), and an
// Unsloth release works with the transformers it pins. The family comes from the launch command
// (--cmd, or run's command: a model id or folder name in it); the stacks from
// checks/model_families.h.
//
// Rule, in the environment torch lives in (else the first one):
//   WARN  transformers 4.x: it has neither a native Nemotron-H nor qwen3_5_moe at all.
//   WARN  the command names a family whose native support came later than the installed
//         transformers (Nemotron-H 5.5.3, Qwen3.5 MoE 5.2.0).
//   WARN  Unsloth at a version a validated stack names, with another transformers than that
//         stack's, unless the command names another family (000 runs Unsloth with --no-deps on
//         Nemotron-H's pins). This one is said instead of the two above.
//   WARN  the command passes trust_remote_code=True or --trust-remote-code for a Nemotron-H
//         model (or for no model named): the repository's bundled code has the old broken cache.
//   INFO  no family named and transformers before 5.5.3: right for 001's stacks, too old for
//         Nemotron-H; the command would tell which.
//   PASS  otherwise.
//   SKIP  no Python, or transformers not installed.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "checks/common.h"
#include "checks/model_families.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/version_compare.h"
#include "facts/command_line.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks::s8 {
namespace {

constexpr std::string_view kId = "S8";
constexpr std::string_view kNativeNemotronH = "5.5.3";

bool trusts_remote_code(std::string_view command) {
  for (const auto& word : facts::command_words(command)) {
    std::string w = to_lower(word);
    std::replace(w.begin(), w.end(), '_', '-');
    if (w == "--trust-remote-code" || w == "trust-remote-code=true" ||
        w == "--trust-remote-code=true") {
      return true;
    }
  }
  return false;
}

// The first family with a model_type that a word of the command names.
const ModelFamily* command_family(const Workload& w) {
  if (!w.command) return nullptr;
  for (const auto& word : facts::command_words(*w.command)) {
    const ModelFamily* family = family_for_model(word);
    if (family != nullptr && !family->model_type.empty()) return family;
  }
  return nullptr;
}

std::string_view pin_of(const ValidatedStack& stack, std::string_view package) {
  for (const Pin& p : stack.pins) {
    if (p.package == package) return p.version;
  }
  return {};
}

// The validated stack that names this Unsloth release, and its family.
std::pair<const ValidatedStack*, const ModelFamily*> unsloth_stack(std::string_view version) {
  for (const ModelFamily* family : known_families()) {
    for (const ValidatedStack& stack : family->stacks) {
      if (pin_of(stack, "unsloth") == version) return {&stack, family};
    }
  }
  return {nullptr, nullptr};
}

// "Unsloth 2026.3.4 (001) was validated with transformers 5.2.0, not 5.5.3: ...", when the
// installed Unsloth is one a stack names, the command names no other family (000 runs Unsloth
// with --no-deps on Nemotron-H's pins), and transformers differs from the stack's.
std::optional<std::string> unsloth_pairing(const pyenv::PythonEnv& env,
                                           const pyenv::Distribution& tf,
                                           const ModelFamily* family) {
  const pyenv::Distribution* unsloth = facts::find_dist(env, "unsloth");
  if (unsloth == nullptr) return std::nullopt;
  auto [stack, stack_family] = unsloth_stack(unsloth->version);
  if (stack == nullptr || (family != nullptr && family != stack_family)) return std::nullopt;
  std::string_view paired = pin_of(*stack, "transformers");
  if (paired.empty() || compare_versions(tf.version, paired) == 0) return std::nullopt;
  return fmt::format(
      "{} was validated with transformers {}, not {}: pin transformers=={} (an Unsloth release "
      "works with the transformers it pins)",
      stack->label, paired, tf.version, paired);
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform&) {
  if (!s.python.ok()) {
    return make_finding(kId, Verdict::kSkip, "no Python environment read: " + s.python.reason());
  }
  const pyenv::PythonEnv* env = facts::judged_env(*s.python);
  if (!env) return make_finding(kId, Verdict::kSkip, "no Python environment found");
  const pyenv::Distribution* tf = facts::find_dist(*env, "transformers");
  if (!tf) {
    return make_finding(kId, Verdict::kSkip,
                        "transformers not installed in " + facts::describe_env(*env));
  }
  const ModelFamily* family = command_family(w);
  std::vector<std::string> problems;
  if (auto pairing = unsloth_pairing(*env, *tf, family)) {
    problems.push_back(std::move(*pairing));
  } else if (compare_versions(tf->version, "5") < 0) {
    problems.push_back(fmt::format(
        "transformers {}: 4.x has no native NemotronHForCausalLM and does not know qwen3_5_moe; "
        "install the release your model family's stack pins (Nemotron-H: {}, 000 §2; "
        "Qwen3.5 MoE with Unsloth 2026.3.4: 5.2.0, 001)",
        tf->version, kNativeNemotronH));
  } else if (family != nullptr && compare_versions(tf->version, family->native_since) < 0) {
    problems.push_back(fmt::format(
        "transformers {} is older than {}, the first release that supports {} natively ({}): "
        "pin transformers=={}",
        tf->version, family->native_since, family->name, family->source, family->native_since));
  }
  const bool nemotron = family == nullptr || family->model_type == "nemotron_h";
  if (nemotron && w.command && trusts_remote_code(*w.command)) {
    problems.push_back(
        "the command trusts remote code: for Nemotron-H that pulls the model's "
        "bundled code with the broken KV cache; drop trust_remote_code and use "
        "the native class");
  }
  std::vector<std::string> details{"environment: " + facts::describe_env(*env)};
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, join(problems, "; "), details);
  }
  if (family == nullptr && compare_versions(tf->version, kNativeNemotronH) < 0) {
    return make_finding(
        kId, Verdict::kInfo,
        fmt::format("transformers {}: right for 001's Qwen3.5 MoE stacks (Unsloth 2026.3.4 with "
                    "5.2.0, 2026.3.17 with 5.3.0); Nemotron-H needs {} or newer (000 §2); "
                    "name the model with --cmd to have it judged",
                    tf->version, kNativeNemotronH),
        details);
  }
  if (family != nullptr) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("transformers {} supports {} natively (since {})", tf->version,
                                    family->name, family->native_since),
                        details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("transformers {} has the native NemotronHForCausalLM with the "
                                  "KV-cache fix",
                                  tf->version),
                      details);
}

}  // namespace
}  // namespace sparkdoc::checks::s8

namespace sparkdoc::checks {

const CheckInfo& s8_transformers() {
  static constexpr CheckInfo kInfo{
      .id = "S8",
      .title = "transformers version for the model family",
      .reads =
          "transformers' and Unsloth's versions in torch's environment; --cmd for the model "
          "and trust_remote_code",
      .symptom =
          "Nemotron-H produces wrong output or fails in its KV cache; qwen3_5_moe is not "
          "recognised; Unsloth breaks after transformers was upgraded",
      .cause =
          "transformers before 5.5.3 has no native NemotronHForCausalLM with the KV-cache fix, "
          "trust_remote_code=True loads the model repository's own code with the old broken "
          "cache, 4.x does not know qwen3_5_moe, and an Unsloth release works with the "
          "transformers it pins (2026.3.4 with 5.2.0, 2026.3.17 with 5.3.0).",
      .how_checked =
          "Finds the model family in the command, compares the installed transformers with the "
          "release that supports it natively and with the one the installed Unsloth was "
          "validated with, and looks for trust_remote_code in the command.",
      .fix =
          "Pin the family's stack: Nemotron-H transformers==5.5.3 (000 §2) without "
          "trust_remote_code; Qwen3.5 MoE with Unsloth 2026.3.4 transformers==5.2.0, or "
          "2026.3.17 with 5.3.0 (001). `sparkdoc lint` checks the same pins in lockfiles (L41).",
      .source = "000 §2-§3, 001",
      .keywords =
          "transformers nemotron nemotron-h nemotronh trust_remote_code remote code kv cache "
          "qwen3_5_moe unsloth pin version wrong output architecture not recognized",
      .run = &s8::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
