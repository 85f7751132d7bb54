#include "facts/network.h"

#include <algorithm>
#include <map>

#include "core/strings.h"

namespace sparkdoc::facts {

std::string pci_function(std::string_view pci_address) {
  // domain:bus:device.function, as sysfs names PCI functions: "0002:01:00.0".
  size_t colon = pci_address.find(':');
  if (colon == std::string_view::npos) return "";
  std::string_view rest = pci_address.substr(colon + 1);
  if (rest.find(':') == std::string_view::npos || rest.find('.') == std::string_view::npos) {
    return "";
  }
  return std::string(rest);
}

std::vector<PortHalves> cx7_port_halves(const net::NetReadings& net) {
  std::map<std::string, std::vector<const net::RdmaDevice*>> by_function;
  for (const net::RdmaDevice& device : net.rdma) {
    std::string function = pci_function(device.pci_address);
    if (!function.empty()) by_function[function].push_back(&device);
  }
  std::vector<PortHalves> halves;
  for (auto& [function, devices] : by_function) {
    if (devices.size() != 2) continue;
    std::sort(devices.begin(), devices.end(),
              [](const auto* a, const auto* b) { return a->pci_address < b->pci_address; });
    PortHalves pair;
    pair.function = function;
    for (const net::RdmaDevice* device : devices) {
      pair.devices.push_back(device->name);
      pair.netdevs.push_back(device->netdevs.empty() ? "" : device->netdevs.front());
    }
    halves.push_back(std::move(pair));
  }
  return halves;
}

NcclList parse_nccl_list(std::string_view value) {
  NcclList list;
  value = trim(value);
  if (value.starts_with('^')) {
    list.exclude = true;
    value.remove_prefix(1);
  }
  if (value.starts_with('=')) {
    list.exact = true;
    value.remove_prefix(1);
  }
  for (std::string_view item : split(value, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    NcclListEntry entry;
    size_t colon = item.find(':');
    entry.name = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos) {
      if (auto port = parse_u64(item.substr(colon + 1)); port && *port < 1024) {
        entry.port = static_cast<unsigned>(*port);
      }
    }
    if (!entry.name.empty()) list.entries.push_back(std::move(entry));
  }
  return list;
}

bool nccl_list_selects(const NcclList& list, std::string_view device) {
  bool named = std::any_of(list.entries.begin(), list.entries.end(), [&](const auto& entry) {
    return list.exact ? device == entry.name : device.starts_with(entry.name);
  });
  return list.exclude ? !named : named;
}

bool port_active(const net::RdmaPort& port) {
  return port.state.find("ACTIVE") != std::string::npos;
}

bool device_active(const net::RdmaDevice& device) {
  return std::any_of(device.ports.begin(), device.ports.end(), port_active);
}

NcclIbDevices nccl_ib_devices(const Snapshot& snapshot) {
  NcclIbDevices out;
  if (!snapshot.network.ok()) return out;
  const net::NetReadings& net = *snapshot.network;
  if (auto it = snapshot.env.find("NCCL_IB_HCA"); it != snapshot.env.end()) {
    out.setting = it->second;
    out.source = "environment";
  } else if (net.nccl_conf.ok()) {
    if (auto conf = net.nccl_conf->settings.find("NCCL_IB_HCA");
        conf != net.nccl_conf->settings.end()) {
      out.setting = conf->second;
      out.source = net.nccl_conf->path;
    }
  }
  std::optional<NcclList> list;
  if (!out.source.empty()) list = parse_nccl_list(out.setting);
  for (const net::RdmaDevice& device : net.rdma) {
    if (list ? nccl_list_selects(*list, device.name) : device_active(device))
      out.devices.push_back(device.name);
  }
  return out;
}

}  // namespace sparkdoc::facts
