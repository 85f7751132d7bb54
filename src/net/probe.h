// The network readings of one machine in one call: interfaces, RDMA devices, NCCL's
// configuration files, logind's IPC removal, the CX-7 hot-plug flag and NCCL libraries outside
// Python. Each part records what it could read; nothing here judges. A few milliseconds on a
// Spark (every read is a small sysfs or /etc file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/fs.h"
#include "model/net.h"

namespace sparkdoc::net {

// The folders searched for libnccl.so.2.X.Y (an image's NCCL, a CUDA toolkit's), in order;
// /usr/local/cuda/targets/<target>/lib is searched for every target.
std::vector<std::string> system_nccl_dirs(const Root& root);

// Every versioned libnccl.so.2.X.Y file in system_nccl_dirs; a folder reached twice (lib64 is
// often a link to targets/<target>/lib) is listed once, under the first name.
std::vector<SystemNccl> read_system_nccl(const Root& root);

// All of it. `env` is the snapshot's recorded environment: NCCL_CONF_FILE, when set, names the
// file NCCL reads before /etc/nccl.conf (read through `root` too).
NetReadings read_network(const Root& root, const std::map<std::string, std::string>& env);

}  // namespace sparkdoc::net
