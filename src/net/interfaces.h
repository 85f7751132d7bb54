// The network interfaces, /sys/class/net/<name>: what `ip link` and `ethtool` would say of each
// (type, MTU, speed, state, carrier, MAC address) and which driver and PCI function is behind
// it. On a GB10 each QSFP port is two PCIe Gen5 x4 functions, and both twins of a port need the
// same MTU at both ends (field-2026 §6).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/net.h"

namespace sparkdoc::net {

// At most this many interfaces are read (a container host can have thousands of veths).
inline constexpr size_t kMaxInterfaces = 1024;

// One interface by name. A value the kernel does not give (the speed and carrier of a link that
// is down) is left none; `driver` and `pci_address` are "" for a virtual interface (lo, veth,
// docker0: no device link), `pci_address` also when the device is not a PCI function (virtio).
Result<Interface> read_interface(const Root& root, const std::string& name);

// Every interface in /sys/class/net, by name. Absent without /sys/class/net.
Result<std::vector<Interface>> read_interfaces(const Root& root);

}  // namespace sparkdoc::net
