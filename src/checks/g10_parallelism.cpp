// G10 dual-Spark is DDP/FSDP only (002 G10; reference §5.1 G10, playbooks #3).
//
// Rule: nodes from the environment (NNODES, SLURM_NNODES / SLURM_JOB_NUM_NODES, WORLD_SIZE over
// LOCAL_WORLD_SIZE when both are set), accelerate's num_machines and the command's --nnodes;
// tensor parallelism from the config scan (a tensor-parallel key with a value > 1) and the
// command (--tensor-parallel-size N, -tp N, --tp N, --tp-size N, tp_size=N,
// tensor_model_parallel_size=N).
//   FAIL  more than one node with TP > 1: ConnectX-7 carries DDP/FSDP gradient and parameter
//         sync, but TP's per-layer exchanges are too fine-grained for it; runs hang or crawl.
//   PASS  more than one node, no TP.
//   INFO  one node: TP across Sparks is not in play (TP up to the node's GPU count is fine inside
//         it; a degree above it, such as TP 2 on a one-GPU Spark, spans nodes and counts as
//         more than one).
// The details name the RDMA links that are up (the node is cabled to another) from the network
// readings.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/command_line.h"
#include "facts/network.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks::g10 {
namespace {

constexpr std::string_view kId = "G10";

struct TpEvidence {
  int64_t degree = 1;
  std::vector<std::string> where;
};

TpEvidence find_tp(const Snapshot& s, const Workload& w) {
  TpEvidence tp;
  auto consider = [&](std::string_view value, std::string where) {
    auto degree = parse_i64(trim(value));
    if (!degree || *degree <= 1) return;
    tp.degree = std::max(tp.degree, *degree);
    tp.where.push_back(std::move(where));
  };
  if (s.parallel_configs.ok()) {
    for (const auto& hit : s.parallel_configs->hits) {
      consider(hit.value, fmt::format("{} = {} in {}:{}", hit.key, hit.value, hit.file, hit.line));
    }
  }
  if (w.command) {
    auto words = facts::command_words(*w.command);
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& word = words[i];
      auto eq = word.find('=');
      if (!facts::is_tensor_parallel_key(word.substr(0, eq))) continue;
      bool is_option = word.starts_with("-");
      if (eq != std::string::npos) {
        consider(word.substr(eq + 1), fmt::format("{} in the command", word));
      } else if (is_option && i + 1 < words.size()) {
        consider(words[i + 1], fmt::format("{} {} in the command", word, words[i + 1]));
      }
    }
  }
  return tp;
}

// The GPUs NVML lists on this node; 0 when it was not read.
size_t gpus_here(const Snapshot& s) {
  return s.gpu.nvml.ok() ? s.gpu.nvml->devices.size() : 0;
}

// "rocep1s0f0, roceP2p1s0f0 up at 200 Gb/s": the RDMA ports with a link up, which say that
// this node is cabled to another; "" when none is or the network was not recorded.
std::string links_up(const Snapshot& s) {
  if (!s.network.ok()) return "";
  std::vector<std::string> up;
  for (const net::RdmaDevice& device : s.network->rdma) {
    for (const net::RdmaPort& port : device.ports) {
      if (!facts::port_active(port)) continue;
      up.push_back(port.rate_gbps ? fmt::format("{} at {:g} Gb/s", device.name, *port.rate_gbps)
                                  : device.name);
    }
  }
  return join(up, ", ");
}

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform& p) {
  facts::NodeCount nodes = facts::count_nodes(s, w);
  TpEvidence tp = find_tp(s, w);
  // A tensor-parallel degree above this node's GPUs spans nodes, whatever the launcher says: TP 2
  // on a Spark, which has one GPU, is TP across two Sparks.
  size_t gpus = gpus_here(s);
  if (nodes.nodes == 1 && gpus > 0 && tp.degree > static_cast<int64_t>(gpus)) {
    int64_t g = static_cast<int64_t>(gpus);
    nodes.nodes = (tp.degree + g - 1) / g;
    nodes.evidence.push_back(fmt::format("tensor parallelism {} over this node's {} GPU{}",
                                         tp.degree, gpus, gpus == 1 ? "" : "s"));
  }
  std::vector<std::string> details;
  for (const auto& e : nodes.evidence) details.push_back("nodes: " + e);
  for (const auto& e : tp.where) details.push_back("tensor parallelism: " + e);
  if (std::string up = links_up(s); !up.empty()) {
    details.push_back("RDMA links up (cabled to another node): " + up);
  } else if (nodes.nodes > 1 && s.network.ok()) {
    details.push_back("no RDMA link is up: NCCL would run over TCP sockets (N1, N3)");
  }
  std::string scanned = s.parallel_configs.ok()
                            ? fmt::format("{} config{} scanned", s.parallel_configs->files_scanned,
                                          s.parallel_configs->files_scanned == 1 ? "" : "s")
                            : "configs not scanned: " + s.parallel_configs.reason();
  if (w.command) scanned += ", command checked";
  std::string boxes = p.kind == facts::PlatformKind::kDgxSpark ? "Sparks" : "nodes";

  if (nodes.nodes > 1) {
    std::string node_text = fmt::format("{} nodes ({})", nodes.nodes, join(nodes.evidence, ", "));
    if (tp.degree > 1) {
      return make_finding(
          kId, Verdict::kFail,
          fmt::format("{} with tensor parallelism {} ({}): ConnectX-7 is fine for DDP/FSDP sync "
                      "but too thin for TP; use DDP or FSDP across {}, TP only inside one node",
                      node_text, tp.degree, tp.where.front(), boxes),
          details);
    }
    return make_finding(kId, Verdict::kPass,
                        fmt::format("{} and no tensor parallelism ({}): DDP/FSDP across {} is "
                                    "the layout that works",
                                    node_text, scanned, boxes),
                        details);
  }
  std::string found = tp.degree > 1
                          ? fmt::format("; tensor parallelism {} found ({}), fine inside one node",
                                        tp.degree, tp.where.front())
                          : "";
  return make_finding(kId, Verdict::kInfo,
                      fmt::format("single node ({}): tensor parallelism across {} is not in "
                                  "play{}",
                                  scanned, boxes, found),
                      details);
}

}  // namespace
}  // namespace sparkdoc::checks::g10

namespace sparkdoc::checks {

const CheckInfo& g10_parallelism() {
  static constexpr CheckInfo kInfo{
      .id = "G10",
      .title = "Dual-Spark is DDP/FSDP only",
      .reads =
          "node count from NNODES, SLURM_NNODES, WORLD_SIZE/LOCAL_WORLD_SIZE, accelerate "
          "num_machines and --nnodes; tensor-parallel settings in configs under the working "
          "directory and in --cmd",
      .symptom =
          "A tensor-parallel launch across two Sparks hangs, runs far slower than one Spark, or "
          "errors out",
      .cause =
          "The ConnectX-7 link between Sparks carries DDP/FSDP gradient and parameter sync well, "
          "but tensor parallelism exchanges activations inside every layer and the link is too "
          "thin for that in training. Revised from the field reports of 2026, keeping the "
          "seed's meaning for training: TP=2 across two Sparks does speed up inference (2.09x "
          "median TPOT, unslothai/unsloth PR#10280) when the link and NCCL are set right, so a "
          "slow or hanging TP inference across Sparks points at the link (MTU 9000 on both "
          "twins, NCCL_IB_HCA naming rocep1s0f0 and roceP2p1s0f0) before TP itself.",
      .how_checked =
          "Counts nodes from the launch environment and the command (and a tensor-parallel "
          "degree above this node's GPU count, which must span nodes), finds tensor-parallel "
          "degrees in configs and the command, and fails TP > 1 across more than one node; "
          "names the RDMA links that are up.",
      .fix =
          "Across two Sparks train with DDP or FSDP (or pipeline stages: 1.96x measured); keep "
          "tensor parallelism inside one node. For TP inference, check the link first.",
      .source =
          "002 G10; field 2026 §6, §8: unslothai/unsloth PR#10280 (2026-09-04), "
          "dgx-spark-playbooks PR#103",
      .keywords =
          "two sparks dual spark multi-node multinode tensor parallel parallelism tp hang hangs "
          "slow connectx nccl ddp fsdp cluster stacked",
      .run = &g10::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
