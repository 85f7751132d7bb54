// JSON field lists of the network readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/net.h"

namespace sparkdoc::net {

SPARKDOC_JSON(Interface, name, type, mtu, speed_mbps, operstate, carrier, carrier_changes, address,
              driver, pci_address)
SPARKDOC_JSON(Gid, index, gid, type, netdev)
SPARKDOC_JSON(RdmaPort, number, state, phys_state, rate, rate_gbps, link_layer, gids)
SPARKDOC_JSON(RdmaDevice, name, hca_type, fw_ver, board_id, node_guid, pci_address, netdevs, ports)
SPARKDOC_JSON(NcclConfFile, path, settings, mtime_s)
SPARKDOC_JSON(LogindIpc, remove_ipc, remove_ipc_source, files_read, lingering, session_users)
SPARKDOC_JSON(SystemNccl, path, version)
SPARKDOC_JSON(NetReadings, interfaces, rdma, nccl_conf, logind, cx7_hotplug_flag, system_nccl,
              nccl_conf_env_file)

}  // namespace sparkdoc::net
