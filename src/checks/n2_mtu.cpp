// N2 MTU 9000 on the interfaces NCCL's RDMA traffic rides. RoCE takes its path MTU from the
// interface's: at the default 1500 the link carries 1 KiB frames. A two-Spark all_gather ran at
// 2.8-3.0 GB/s bus bandwidth until MTU 9000 was set on both twins at both ends, then at
// 18.94-20.95 GB/s (field-2026 §6: dgx-spark-playbooks#25, 2025-11-19). Both ends must agree.
//   WARN  an interface of an RDMA device with a port up below 9000, or the two halves of one
//         QSFP port with different MTUs;
//   PASS  every such interface at 9000 or more;
//   INFO  no RDMA port is up (MTUs listed); SKIP when the network was not recorded or there is
//         no RDMA device.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/network.h"

namespace sparkdoc::checks::n2 {
namespace {

constexpr std::string_view kId = "N2";
constexpr uint32_t kJumboMtu = 9000;

std::string mtu_text(const net::Interface* interface) {
  if (!interface) return "not found";
  return interface->mtu ? std::to_string(*interface->mtu) : "unread";
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (net->rdma.empty()) {
    return make_finding(kId, Verdict::kSkip, "no RDMA device: no RoCE interface to judge");
  }
  std::vector<std::string> details;
  std::vector<std::string> low;
  unsigned up = 0;
  for (const net::RdmaDevice& device : net->rdma) {
    bool active = facts::device_active(device);
    for (const std::string& name : device.netdevs) {
      const net::Interface* interface = find_interface(*net, name);
      details.push_back(fmt::format("{} ({}): MTU {}, port {}", name, device.name,
                                    mtu_text(interface), active ? "up" : "down"));
      if (!active) continue;
      ++up;
      if (interface && interface->mtu && *interface->mtu < kJumboMtu) {
        low.push_back(fmt::format("{} {}", name, *interface->mtu));
      }
    }
  }
  std::vector<std::string> unequal;
  for (const facts::PortHalves& pair : facts::cx7_port_halves(*net)) {
    if (pair.netdevs.size() != 2) continue;
    const net::Interface* a = find_interface(*net, pair.netdevs[0]);
    const net::Interface* b = find_interface(*net, pair.netdevs[1]);
    if (a && b && a->mtu && b->mtu && *a->mtu != *b->mtu) {
      unequal.push_back(fmt::format("{} {} vs {} {}", a->name, *a->mtu, b->name, *b->mtu));
    }
  }
  if (!low.empty() || !unequal.empty()) {
    std::string what =
        !low.empty()
            ? fmt::format("MTU below {} on a link that is up ({})", kJumboMtu, join(low, ", "))
            : fmt::format("the two halves of a QSFP port differ ({})", join(unequal, "; "));
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{}: RoCE frames shrink to the smaller MTU and a two-Spark all_gather ran "
                    "at 2.8-3 GB/s instead of 19-21; set 9000 on both twins at both ends "
                    "(sudo ip link set dev IF mtu 9000 now, netplan for the next boot)",
                    what),
        std::move(details));
  }
  if (up == 0) {
    return make_finding(kId, Verdict::kInfo, "no RDMA port has a link up: MTUs listed, none judged",
                        std::move(details));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("MTU {} or more on the {} interface{} of RDMA ports that are up",
                                  kJumboMtu, up, up == 1 ? "" : "s"),
                      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::n2

namespace sparkdoc::checks {

const CheckInfo& n2_mtu() {
  static constexpr CheckInfo kInfo{
      .id = "N2",
      .title = "MTU 9000 on the RDMA interfaces",
      .reads =
          "MTU of each interface of an RDMA device (/sys/class/net/IF/mtu) and whether its "
          "port is up",
      .symptom = "A two-node NCCL all_gather at about 3 GB/s bus bandwidth on a 200 Gb/s link",
      .cause =
          "Interfaces come up at MTU 1500, and RoCE's path MTU follows the interface's. Each "
          "Spark's QSFP port is two interfaces (twins), and each must be set, on both ends.",
      .how_checked =
          "Reads the MTU of every interface behind an RDMA device whose port is up, and "
          "compares the two halves of each GB10 QSFP port.",
      .fix =
          "sudo ip link set dev IF mtu 9000 for both twins on both nodes (undo: mtu 1500); "
          "make it permanent in netplan (mtu: 9000 under the interface).",
      .source = "field 2026 §6: dgx-spark-playbooks#25 (2025-11-19)",
      .keywords =
          "mtu 9000 1500 jumbo frames roce rdma nccl slow busbw all_gather connectx "
          "twin ip link two sparks multi-node",
      .run = &n2::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
