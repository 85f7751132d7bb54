// Lint rule L43: how a launch command spreads a model over Sparks (002 G10). Opens with its rule.
#include <fmt/format.h>

#include <algorithm>

#include "checks/lint.h"
#include "checks/lint_helpers.h"
#include "core/strings.h"
#include "facts/command_line.h"

namespace sparkdoc::checks {
namespace {

// The node count a launcher's option gives: torchrun's --nnodes N (or MIN:MAX, the larger),
// accelerate's --num_machines, deepspeed's --num_nodes; 1 when none.
int64_t launch_nodes(const job::Command& c) {
  int64_t nodes = 1;
  auto consider = [&nodes](std::string_view value) {
    if (size_t colon = value.rfind(':'); colon != std::string_view::npos) {
      value = value.substr(colon + 1);
    }
    if (auto n = parse_i64(trim(value))) nodes = std::max(nodes, *n);
  };
  if (auto v = c.option(
          {"--nnodes", "--num_machines", "--num-machines", "--num_nodes", "--num-nodes"})) {
    consider(*v);
  }
  if (auto v = c.env_value("NNODES")) consider(*v);
  return nodes;
}

// The tensor-parallel degree a command line asks for (--tensor-parallel-size 2, -tp 2,
// tp_size=2 inside a python -c string), as G10 reads a --cmd; 1 when none.
int64_t launch_tp(const job::Command& c) {
  int64_t tp = 1;
  const auto words = facts::command_words(c.text);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const size_t eq = word.find('=');
    if (!facts::is_tensor_parallel_key(word.substr(0, eq))) continue;
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (word.starts_with("-") && i + 1 < words.size()) {
      value = words[i + 1];
    }
    if (auto n = parse_i64(trim(value))) tp = std::max(tp, *n);
  }
  return tp;
}

// L43 Tensor parallelism across Sparks (002 G10): ConnectX-7 between two Sparks carries DDP and
// FSDP's gradient and parameter sync, but tensor parallelism exchanges activations inside every
// layer, which that link is too thin for: the run hangs, errors or crawls below one Spark.
//   FAIL  on a Spark, a launch command with more than one node and a tensor-parallel degree
//         above 1.
void l43(const job::Job& job, const LintContext& ctx, LintSink& sink) {
  if (!ctx.spark) return;
  for (const job::JobFile& f : job.files) {
    if (!lint::has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      const int64_t nodes = launch_nodes(c);
      const int64_t tp = launch_tp(c);
      if (nodes <= 1 || tp <= 1) continue;
      sink.add(Verdict::kFail, f, c.line,
               fmt::format("{} nodes with tensor parallelism {}: between Sparks ConnectX-7 "
                           "carries DDP/FSDP sync, not tensor parallelism's per-layer exchange "
                           "(the run hangs or crawls); use DDP or FSDP across the Sparks and "
                           "keep tensor parallelism inside one (002 G10)",
                           nodes, tp));
    }
  }
}

}  // namespace

const CheckInfo& l43_tensor_parallel_across_sparks() {
  static constexpr CheckInfo kInfo{
      .id = "L43",
      .title = "Tensor parallelism across Sparks in a launch command",
      .reads =
          "launch commands in shell files, Makefiles, compose files and --cmd: torchrun, "
          "accelerate launch, deepspeed node counts and tensor-parallel options",
      .symptom =
          "A two-Spark launch with tensor parallelism hangs, errors out or runs far "
          "slower than one Spark",
      .cause =
          "The ConnectX-7 link between Sparks is fast enough for DDP and FSDP's gradient and "
          "parameter sync but too thin for tensor parallelism's fine-grained exchanges "
          "inside every layer.",
      .how_checked =
          "Reads each command's node count (--nnodes, --num_machines, --num_nodes, "
          "NNODES=) and tensor-parallel degree (--tensor-parallel-size, --tp, -tp, "
          "tp_size=, tensor_model_parallel_size=) as check G10 reads --cmd.",
      .fix =
          "Across Sparks use DDP or FSDP (data or fully sharded parallelism); tensor "
          "parallelism only inside one node.",
      .source = "002 G10",
      .keywords =
          "tensor parallel tp two sparks dual spark nnodes torchrun hang connectx "
          "multi-node",
      .lint = &l43,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
