// S8 transformers for Nemotron-H (000 §2, §3; 001 for qwen3_5_moe).
//
// Rule, in the environment torch lives in (else the first one):
//   WARN  transformers older than 5.5.3: the first release with a native NemotronHForCausalLM
//         including the KV-cache fix (and 4.x does not know qwen3_5_moe at all).
//   WARN  the command passes trust_remote_code=True or --trust-remote-code: that loads the
//         model repository's bundled Nemotron-H code, whose KV cache is the old broken one.
//   PASS  5.5.3 or newer and no remote code.
//   SKIP  no Python, or transformers not installed.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/version_compare.h"
#include "facts/command_line.h"
#include "facts/platform.h"
#include "facts/python.h"

namespace sparkdoc::checks {
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
  std::vector<std::string> problems;
  if (compare_versions(tf->version, kNativeNemotronH) < 0) {
    problems.push_back(
        fmt::format("transformers {}: no native NemotronHForCausalLM with the "
                    "KV-cache fix before {} (and 4.x lacks qwen3_5_moe); for "
                    "Nemotron-H pin transformers=={}",
                    tf->version, kNativeNemotronH, kNativeNemotronH));
  }
  if (w.command && trusts_remote_code(*w.command)) {
    problems.push_back(
        "the command trusts remote code: for Nemotron-H that pulls the model's "
        "bundled code with the broken KV cache; drop trust_remote_code and use "
        "the native class");
  }
  std::vector<std::string> details{"environment: " + facts::describe_env(*env)};
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, join(problems, "; "), details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("transformers {} has the native NemotronHForCausalLM with the "
                                  "KV-cache fix",
                                  tf->version),
                      details);
}

}  // namespace

const CheckInfo& s8_transformers() {
  static constexpr CheckInfo kInfo{
      .id = "S8",
      .title = "transformers version for Nemotron-H",
      .reads = "transformers' version in torch's environment; --cmd for trust_remote_code",
      .symptom =
          "Nemotron-H produces wrong output or fails in its KV cache; qwen3_5_moe is not "
          "recognised",
      .cause =
          "transformers before 5.5.3 has no native NemotronHForCausalLM with the KV-cache fix, "
          "trust_remote_code=True loads the model repository's own code with the old broken "
          "cache, and 4.x does not know qwen3_5_moe.",
      .how_checked =
          "Compares the installed transformers with 5.5.3 and looks for trust_remote_code in the "
          "command.",
      .fix =
          "Pin transformers==5.5.3 or newer for Nemotron-H and drop trust_remote_code=True; with "
          "Unsloth, use the transformers release that Unsloth version pins.",
      .source = "000 §2-§3",
      .keywords =
          "transformers nemotron nemotron-h nemotronh trust_remote_code remote code kv cache "
          "qwen3_5_moe version wrong output architecture not recognized",
      .run = &judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
