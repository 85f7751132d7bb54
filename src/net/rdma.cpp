#include "net/rdma.h"

#include <algorithm>

#include "net/tree.h"
#include "net/values.h"

namespace sparkdoc::net {
namespace {

// The numbered entries of a folder (ports/1, gids/0...), in numeric order.
std::vector<unsigned> numbered(const Folder& dir, size_t max_names) {
  std::vector<unsigned> out;
  auto names = dir.names(max_names);
  if (!names) return out;
  for (const std::string& n : *names) {
    auto v = parse_sysfs_uint(n);
    if (v && *v <= UINT32_MAX && std::to_string(*v) == n) out.push_back(static_cast<unsigned>(*v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Gid> read_gids(const Folder& port) {
  std::vector<Gid> out;
  auto gids = port.sub("gids");
  if (!gids) return out;
  auto types = port.sub("gid_attrs/types");
  auto ndevs = port.sub("gid_attrs/ndevs");
  // The whole table in one pass (255 slots on a RoCE port), then the attributes of the few in
  // use: reading the type of an empty slot is EINVAL anyway.
  for (auto& [slot, text] : gids->read_files(kMaxGidSlots)) {
    auto index = parse_sysfs_uint(slot);
    if (!index || *index > UINT32_MAX || std::to_string(*index) != slot) continue;
    auto gid = parse_gid(text);
    if (!gid) continue;  // an empty slot
    Gid g;
    g.index = static_cast<unsigned>(*index);
    g.gid = std::move(*gid);
    if (types) g.type = types->value(slot);
    if (ndevs) g.netdev = ndevs->value(slot);
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const Gid& a, const Gid& b) { return a.index < b.index; });
  return out;
}

}  // namespace

Result<RdmaDevice> read_rdma_device(const Root& root, const std::string& name) {
  auto dir = Folder::open(root, child("/sys/class/infiniband", name));
  if (!dir) return tl::unexpected(std::move(dir.error()));
  RdmaDevice d;
  d.name = clean_value(name);
  d.hca_type = dir->value("hca_type");
  d.fw_ver = dir->value("fw_ver");
  d.board_id = dir->value("board_id");
  d.node_guid = dir->value("node_guid");
  if (auto device_name = dir->link_name("device"); device_name && is_pci_address(*device_name)) {
    d.pci_address = *device_name;
  }
  if (auto net = dir->sub("device/net")) {
    if (auto netdevs = net->names(64)) {
      for (const std::string& n : *netdevs) d.netdevs.push_back(clean_value(n));
    }
  }
  if (auto ports = dir->sub("ports")) {
    for (unsigned number : numbered(*ports, kMaxPorts)) {
      auto port = ports->sub(std::to_string(number));
      if (!port) continue;
      RdmaPort p;
      p.number = number;
      p.state = port->value("state");
      p.phys_state = port->value("phys_state");
      p.rate = port->value("rate");
      p.rate_gbps = parse_rate_gbps(p.rate);
      p.link_layer = port->value("link_layer");
      p.gids = read_gids(*port);
      d.ports.push_back(std::move(p));
    }
  }
  return d;
}

Result<std::vector<RdmaDevice>> read_rdma(const Root& root) {
  return read_class<RdmaDevice>(root, "/sys/class/infiniband", kMaxRdmaDevices, read_rdma_device);
}

}  // namespace sparkdoc::net
