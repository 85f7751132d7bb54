// Readings of the network a multi-node job runs over: what the net probes produce and the
// snapshot records. Two DGX Sparks are paired over ConnectX-7; one QSFP port of a GB10 is two
// PCIe Gen5 x4 endpoints, two RDMA devices (rocep1s0f0 and roceP2p1s0f0), that NCCL must both
// be given (../shared/reference/field-2026.md §6). Values are as sysfs writes them; nothing here
// is judged. Units are in the names.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"

namespace sparkdoc::net {

// One network interface, /sys/class/net/<name>.
struct Interface {
  std::string name;                         // "enp1s0f0np0", "enP2p1s0f1np1", "lo"
  uint32_t type = 0;                        // ARPHRD_*: 1 Ethernet, 32 InfiniBand, 772 loopback
  std::optional<uint32_t> mtu;              // bytes
  std::optional<int64_t> speed_mbps;        // none when the link is down or the driver says -1
  std::string operstate;                    // "up", "down", "unknown", "dormant", ...
  std::optional<bool> carrier;              // none when the interface is administratively down
  std::optional<uint64_t> carrier_changes;  // link flaps since the driver loaded
  std::string address;                      // MAC address as written
  std::string driver;                       // "mlx5_core", "r8169"; "" for a virtual interface
  std::string pci_address;                  // "0000:01:00.0"; "" when not a PCI function
  bool operator==(const Interface&) const = default;
};

// One non-zero entry of a port's GID table.
struct Gid {
  unsigned index = 0;
  std::string gid;     // "0000:0000:0000:0000:0000:ffff:c0a8:6401", as sysfs writes it
  std::string type;    // gid_attrs/types: "RoCE v2", "IB/RoCE v1"
  std::string netdev;  // gid_attrs/ndevs: the interface the GID belongs to
  bool operator==(const Gid&) const = default;
};

// One port of an RDMA device, /sys/class/infiniband/<dev>/ports/<n>.
struct RdmaPort {
  unsigned number = 0;
  std::string state;       // "4: ACTIVE", as written
  std::string phys_state;  // "5: LinkUp"
  std::string rate;        // "200 Gb/sec (4X HDR)"
  std::optional<double> rate_gbps;
  std::string link_layer;  // "Ethernet" (RoCE) or "InfiniBand"
  std::vector<Gid> gids;   // non-zero entries only, by index
  bool operator==(const RdmaPort&) const = default;
};

// One RDMA device, /sys/class/infiniband/<dev>.
struct RdmaDevice {
  std::string name;      // "rocep1s0f0", "roceP2p1s0f0", "mlx5_0"
  std::string hca_type;  // "MT4129" (ConnectX-7)
  std::string fw_ver;    // "28.45.4028"
  std::string board_id;
  std::string node_guid;
  std::string pci_address;           // "0002:01:00.0"
  std::vector<std::string> netdevs;  // interfaces of the same PCI function
  std::vector<RdmaPort> ports;
  bool operator==(const RdmaDevice&) const = default;
};

// /etc/nccl.conf (or $NCCL_CONF_FILE): NCCL reads it at init, after the environment. Images
// leave one behind with settings tuned for another topology.
struct NcclConfFile {
  std::string path;
  std::map<std::string, std::string> settings;  // NAME=value lines; comments skipped
  int64_t mtime_s = 0;
  bool operator==(const NcclConfFile&) const = default;
};

// systemd-logind's IPC removal: with RemoveIPC=yes (the default) and no lingering, the last
// session of a user closing deletes that user's POSIX semaphores and /dev/shm files, which kills
// a worker an SSH session started.
struct LogindIpc {
  std::optional<bool> remove_ipc;          // the last RemoveIPC= found; none: unset (yes)
  std::string remove_ipc_source;           // the file that set it
  std::vector<std::string> files_read;     // logind.conf and logind.conf.d/*.conf, in order
  std::vector<std::string> lingering;      // user names in /var/lib/systemd/linger
  std::vector<std::string> session_users;  // users with a running user manager (/run/user/UID)
  bool operator==(const LogindIpc&) const = default;
};

// NCCL as a library outside Python wheels (an image's /usr/lib/<multiarch>/libnccl.so.2.X.Y).
struct SystemNccl {
  std::string path;
  std::string version;  // "2.28.9"
  bool operator==(const SystemNccl&) const = default;
};

struct NetReadings {
  std::vector<Interface> interfaces;  // by name
  std::vector<RdmaDevice> rdma;       // by name; empty without RDMA hardware or driver
  Reading<NcclConfFile> nccl_conf;    // absent (kAbsent) when there is none
  Reading<LogindIpc> logind;
  bool cx7_hotplug_flag = false;  // /etc/nvidia/cx7-hotplug-enabled exists
  std::vector<SystemNccl> system_nccl;
  // $NCCL_CONF_FILE when the environment names one: NCCL reads it before /etc/nccl.conf, and a
  // name it sets there wins over /etc's (absent, kAbsent, when the variable is not set).
  Reading<NcclConfFile> nccl_conf_env_file;
  bool operator==(const NetReadings&) const = default;
};

}  // namespace sparkdoc::net
