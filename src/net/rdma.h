// The RDMA devices, /sys/class/infiniband/<dev>: what `ibstat` and `ibv_devinfo` would say of
// each (HCA type, firmware, ports with their state, rate and link layer) and the GID table NCCL
// picks NCCL_IB_GID_INDEX from. A GB10's ConnectX-7 shows four devices, rocep1s0f0,
// rocep1s0f1, roceP2p1s0f0 and roceP2p1s0f1 (MT4129); the RoCE v2 IPv4 GID sits at index 3
// on some pairs and 5 on others (field-2026 §6).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/net.h"

namespace sparkdoc::net {

inline constexpr size_t kMaxRdmaDevices = 64;
inline constexpr size_t kMaxPorts = 16;
// A RoCE port's table has 255 slots on mlx5 (gid_tbl_len); at most this many are read.
inline constexpr size_t kMaxGidSlots = 1024;

// One device by name. Its GID table keeps only the slots in use (a non-zero GID), each with
// its type and interface (empty when the kernel gives none).
Result<RdmaDevice> read_rdma_device(const Root& root, const std::string& name);

// Every device in /sys/class/infiniband, by name. Absent without it (no RDMA driver loaded).
Result<std::vector<RdmaDevice>> read_rdma(const Root& root);

}  // namespace sparkdoc::net
