// How many nodes the planned run spans (G10's rule; S1 and S2 use it too): the largest count
// any launcher variable, accelerate's config or the planned command names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace sparkdoc::facts {

struct NodeCount {
  int64_t nodes = 1;
  std::vector<std::string> evidence;  // "SLURM_NNODES=2", "--nnodes 2 in the command"
};
NodeCount count_nodes(const Snapshot& snapshot, const Workload& workload);

}  // namespace sparkdoc::facts
