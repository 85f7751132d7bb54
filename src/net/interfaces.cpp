#include "net/interfaces.h"

#include "net/tree.h"
#include "net/values.h"

namespace sparkdoc::net {

Result<Interface> read_interface(const Root& root, const std::string& name) {
  auto dir = Folder::open(root, child("/sys/class/net", name));
  if (!dir) return tl::unexpected(std::move(dir.error()));
  auto text = [&](std::string_view file) {
    auto t = dir->read(file);
    return t ? *t : std::string();
  };
  Interface i;
  i.name = clean_value(name);
  if (auto type = parse_sysfs_uint(text("type")); type && *type <= UINT32_MAX) {
    i.type = static_cast<uint32_t>(*type);
  }
  if (auto mtu = parse_sysfs_uint(text("mtu")); mtu && *mtu <= UINT32_MAX) {
    i.mtu = static_cast<uint32_t>(*mtu);
  }
  i.speed_mbps = parse_speed_mbps(text("speed"));
  i.operstate = dir->value("operstate");
  i.carrier = parse_carrier(text("carrier"));
  i.carrier_changes = parse_sysfs_uint(text("carrier_changes"));
  i.address = dir->value("address");
  // A virtual interface (lo, veth, a bridge) has no device link; a physical one's device is
  // its PCI function, or a virtio or USB device, whose driver link names the driver.
  if (auto device_name = dir->link_name("device")) {
    if (is_pci_address(*device_name)) i.pci_address = *device_name;
    if (auto device = dir->sub("device")) {
      if (auto driver = device->link_name("driver")) i.driver = clean_value(*driver);
    }
  }
  return i;
}

Result<std::vector<Interface>> read_interfaces(const Root& root) {
  return read_class<Interface>(root, "/sys/class/net", kMaxInterfaces, read_interface);
}

}  // namespace sparkdoc::net
