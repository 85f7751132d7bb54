// S1 distributed leftovers (001). A one-GPU Spark run must not inherit launch state: frameworks
// that see WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or an MPI launcher's rank
// variables (OMPI_COMM_WORLD_*, PMI_RANK, PMIX_RANK, MPI_LOCALRANKID...) start a multi-process
// initialisation that hangs or fails. 001 strips every NCCL_*, OMPI_*, MPI_* and PMI_* as well;
// most of those are tuning (OMPI_MCA_*, NCCL_SOCKET_IFNAME) that images set on purpose and that
// start nothing by themselves, so they are reported, not warned about.
//   WARN  launch-state variables set while the run is single-node (G10's node count): unset
//         them, or launch with `sparkdoc run`, which starts the command without them.
//   INFO  only tuning variables set; or a multi-node run, where all of them are expected.
//   PASS  none set.
// NCCL_VERSION is not a setting: CUDA and NGC images set it as a label, and NCCL ignores it.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/environment.h"
#include "facts/nodes.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s1 {
namespace {

Finding judge(const Snapshot& s, const Workload& w, const facts::Platform&) {
  constexpr std::string_view kId = "S1";
  std::vector<std::string> launch;
  std::vector<std::string> tuning;
  std::vector<std::string> details;
  for (const auto& entry : s.env) {
    const std::string& name = entry.first;
    if (facts::is_launch_state(name)) {
      launch.push_back(name);
    } else if (facts::is_distributed_tuning(name)) {
      tuning.push_back(name);
    } else {
      continue;
    }
    details.push_back(fmt::format("{}={}", name, entry.second));
  }
  if (launch.empty() && tuning.empty()) {
    return make_finding(kId, Verdict::kPass,
                        "no distributed-launch variables (WORLD_SIZE, RANK, MASTER_*, NCCL_*, "
                        "OMPI_*, MPI_*, PMI_*) set");
  }
  std::vector<std::string> all = launch;
  all.insert(all.end(), tuning.begin(), tuning.end());
  facts::NodeCount nodes = facts::count_nodes(s, w);
  if (nodes.nodes > 1) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{}-node run ({}): distributed variables are expected: {}",
                                    nodes.nodes, join(nodes.evidence, ", "), join(all, ", ")),
                        details);
  }
  if (launch.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("no launch state set; tuning variables {} start nothing by "
                                    "themselves (`sparkdoc run` strips them, as 001 does)",
                                    join(tuning, ", ")),
                        details);
  }
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{} set on a single-node run: frameworks will try a "
                                  "multi-process start; unset {} or launch with `sparkdoc run`, "
                                  "which cleans them",
                                  join(all, ", "), all.size() == 1 ? "it" : "them"),
                      details);
}

}  // namespace
}  // namespace sparkdoc::checks::s1

namespace sparkdoc::checks {

const CheckInfo& s1_distributed_env() {
  static constexpr CheckInfo kInfo{
      .id = "S1",
      .title = "Distributed-launch leftovers in the environment",
      .reads =
          "WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, NCCL_*, "
          "OMPI_*, MPI_*, PMI_* from the environment; the node count",
      .symptom =
          "A single-GPU training script hangs at start-up waiting for other ranks, or tries to "
          "initialise NCCL or MPI",
      .cause =
          "Variables left from an earlier distributed set-up make accelerate, DeepSpeed, FSDP "
          "and torch.distributed start a multi-process run on a one-GPU Spark.",
      .how_checked =
          "Lists the rank, rendezvous, NCCL and MPI variables that are set when the run is "
          "single-node.",
      .fix =
          "Unset them (WORLD_SIZE RANK LOCAL_RANK MASTER_ADDR MASTER_PORT and "
          "NCCL_*/OMPI_*/MPI_*), or launch with sparkdoc run, which starts the command without "
          "them; inside the training script, sparkdoc.fixes.scrub_distributed_env() before "
          "torch and accelerate are imported removes the same ones (docs/PYTHON.md).",
      .source = "001",
      .keywords =
          "world_size rank local_rank master_addr master_port nccl mpi ompi pmi environment "
          "variables hang init_process_group distributed single gpu rendezvous",
      .run = &s1::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
