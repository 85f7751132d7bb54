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

#include "checks/check_fns.h"
#include "checks/common.h"
#include "core/version_compare.h"
#include "core/strings.h"
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

}  // namespace

Finding check_s8_transformers(const Snapshot& s, const Workload& w, const facts::Platform&) {
  if (!s.python.ok()) {
    return make_finding(kId, Verdict::kSkip, "no Python environment read: " + s.python.reason());
  }
  const pyenv::PythonEnv* env = facts::judged_env(*s.python);
  if (!env) return make_finding(kId, Verdict::kSkip, "no Python environment found");
  const pyenv::Distribution* tf = facts::find_dist(*env, "transformers");
  if (!tf) {
    return make_finding(kId, Verdict::kSkip, "transformers not installed in " + facts::describe_env(*env));
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

}  // namespace sparkdoc::checks
