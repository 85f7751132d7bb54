// S4 TOKENIZERS_PARALLELISM (001). The Rust tokenizers' thread pool does not survive fork():
// dataset.map(num_proc>1) and DataLoader workers deadlock after a tokenizer has run.
//   WARN  not set to "false" (the tokenizers library also accepts off/0/no/f/n as off).
//   PASS  set off.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/environment.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s4 {
namespace {

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S4";
  const std::string* value = facts::env_value(s, "TOKENIZERS_PARALLELISM");
  if (value) {
    std::string v = to_lower(trim(*value));
    if (v == "false" || v == "0" || v == "off" || v == "no" || v == "f" || v == "n") {
      return make_finding(kId, Verdict::kPass, "TOKENIZERS_PARALLELISM=" + *value);
    }
  }
  std::string current =
      value ? "TOKENIZERS_PARALLELISM=" + *value : std::string("TOKENIZERS_PARALLELISM is unset");
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{}: tokenizers threads deadlock forked workers "
                                  "(dataset.map with num_proc > 1); export "
                                  "TOKENIZERS_PARALLELISM=false",
                                  current));
}

}  // namespace
}  // namespace sparkdoc::checks::s4

namespace sparkdoc::checks {

const CheckInfo& s4_tokenizers_parallelism() {
  static constexpr CheckInfo kInfo{
      .id = "S4",
      .title = "TOKENIZERS_PARALLELISM",
      .reads = "TOKENIZERS_PARALLELISM",
      .symptom =
          "dataset.map(num_proc>1) or DataLoader workers hang forever after a warning that the "
          "process was forked after parallelism was used",
      .cause =
          "The Rust tokenizers thread pool does not survive fork(); forked workers deadlock on "
          "its locks.",
      .how_checked = "Reads TOKENIZERS_PARALLELISM.",
      .fix = "export TOKENIZERS_PARALLELISM=false, and use dataset.map(num_proc=1).",
      .source = "001",
      .keywords =
          "tokenizers parallelism fork forked deadlock dataset map num_proc hang dataloader "
          "workers",
      .run = &s4::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
