// What the network readings mean for a multi-node job, by one definition: the N checks and
// `sparkdoc compare` both use it.
//
// Port halves. One QSFP port of a GB10's ConnectX-7 is two PCIe Gen5 x4 endpoints (~100 Gb/s
// each) with the same bus:device.function in PCI domains 0000 and 0002: RDMA devices rocep1s0f0
// and roceP2p1s0f0 behind port 0 (field-2026 §6, playbooks PR#103). NCCL reaches the port's full
// rate only when it is given both.
//
// NCCL's devices. NCCL_IB_HCA (the environment first, then the nccl.conf NCCL read) is a list of
// "name[:port]" separated by commas; "^" before the list excludes what it names instead of
// selecting it, "=" before the list matches names exactly instead of as prefixes (NCCL's
// environment-variable documentation). Unset, NCCL takes every RDMA device with an active port.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/net.h"
#include "model/snapshot.h"

namespace sparkdoc::facts {

struct PortHalves {
  std::vector<std::string> devices;  // RDMA devices of one QSFP port, by PCI domain
  std::vector<std::string> netdevs;  // their interfaces, in the same order
  std::string function;              // the bus:device.function they share, "01:00.0"
};
// Pairs of RDMA devices that share a bus:device.function across PCI domains; a device with no
// twin is in no pair.
std::vector<PortHalves> cx7_port_halves(const net::NetReadings& net);

// The PCI address without its domain: "0002:01:00.0" -> "01:00.0"; "" when not one.
std::string pci_function(std::string_view pci_address);

// One entry of an NCCL interface or device list.
struct NcclListEntry {
  std::string name;
  std::optional<unsigned> port;
};
struct NcclList {
  bool exclude = false;  // "^": every device but those named
  bool exact = false;    // "=": names match exactly, not as prefixes
  std::vector<NcclListEntry> entries;
};
NcclList parse_nccl_list(std::string_view value);
bool nccl_list_selects(const NcclList& list, std::string_view device);

struct NcclIbDevices {
  std::string setting;               // "rocep1s0f0,roceP2p1s0f0"; "" when unset
  std::string source;                // "environment", the nccl.conf path, or "" when unset
  std::vector<std::string> devices;  // RDMA devices NCCL would use, by name
};
// The RDMA devices NCCL_IB_HCA selects, or every device with an active port when it is unset;
// empty when the network was not recorded. (NCCL itself then skips a selected device whose
// port is down: the N checks say so.)
NcclIbDevices nccl_ib_devices(const Snapshot& snapshot);

// A port is up when its state is ACTIVE ("4: ACTIVE"); a device when one of its ports is.
bool port_active(const net::RdmaPort& port);
bool device_active(const net::RdmaDevice& device);

}  // namespace sparkdoc::facts
