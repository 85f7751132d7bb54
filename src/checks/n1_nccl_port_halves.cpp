// N1 NCCL uses both halves of a GB10 QSFP port. One QSFP port of the ConnectX-7 is two PCIe
// Gen5 x4 endpoints of about 100 Gb/s each, two RDMA devices (rocep1s0f0 and roceP2p1s0f0 behind
// port 0). NCCL_SOCKET_IFNAME picks the bootstrap interface only; the data goes over the RDMA
// devices NCCL_IB_HCA selects, and a list naming one half moves it over half the port
// (field-2026 §6: dgx-spark-playbooks PR#103, 2026-08-17; 23.74 GB/s all_gather bus bandwidth
// with both halves on NCCL v2.28.9-1).
//   WARN  a port with a link up whose halves NCCL_IB_HCA (environment, then nccl.conf) does not
//         both select; NCCL_IB_HCA selecting no device with a port up (NCCL falls back to TCP
//         sockets);
//   PASS  every port with a link up has both halves selected (NCCL_IB_HCA unset selects every
//         device with a port up);
//   INFO  no QSFP port is up (not cabled to another node), or RDMA devices that are not a GB10's
//         paired halves (listed with what NCCL would use);
//   SKIP  the network was not recorded, or there is no RDMA device.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/network.h"

namespace sparkdoc::checks::n1 {
namespace {

constexpr std::string_view kId = "N1";

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string selection_text(const facts::NcclIbDevices& nccl) {
  if (nccl.source.empty()) return "NCCL_IB_HCA unset";
  return fmt::format("NCCL_IB_HCA={} ({})", nccl.setting, nccl.source);
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (net->rdma.empty()) {
    return make_finding(kId, Verdict::kSkip,
                        "no RDMA device (no ConnectX, or its mlx5_ib driver is not loaded): NCCL "
                        "would use TCP sockets between nodes");
  }
  facts::NcclIbDevices nccl = facts::nccl_ib_devices(s);
  std::string selected = nccl.devices.empty() ? "none" : join(nccl.devices, ", ");
  std::vector<std::string> details;
  details.push_back(fmt::format("{} selects: {}", selection_text(nccl), selected));

  bool any_selected_up = false;
  for (const std::string& name : nccl.devices) {
    if (const net::RdmaDevice* d = find_rdma(*net, name); d && facts::device_active(*d)) {
      any_selected_up = true;
    }
  }
  std::vector<facts::PortHalves> halves = facts::cx7_port_halves(*net);
  std::vector<std::string> short_ports;
  std::string suggestion;  // both halves of the first port NCCL uses only part of
  unsigned ports_up = 0;
  for (const facts::PortHalves& pair : halves) {
    bool up = false;
    for (const std::string& name : pair.devices) {
      if (const net::RdmaDevice* d = find_rdma(*net, name); d && facts::device_active(*d))
        up = true;
    }
    if (!up) continue;
    ++ports_up;
    std::vector<std::string> missing;
    for (const std::string& name : pair.devices) {
      if (!contains(nccl.devices, name)) missing.push_back(name);
    }
    details.push_back(fmt::format(
        "QSFP port {}: halves {}; NCCL uses {}", pair.function, join(pair.devices, " and "),
        missing.empty() ? std::string("both") : "not " + join(missing, ", ")));
    if (!missing.empty() && suggestion.empty()) suggestion = join(pair.devices, ",");
    if (!missing.empty() && missing.size() < pair.devices.size()) {
      short_ports.push_back(
          fmt::format("{} without {}", join(pair.devices, "/"), join(missing, ", ")));
    } else if (!missing.empty()) {
      short_ports.push_back(fmt::format("neither of {}", join(pair.devices, "/")));
    }
  }
  if (!nccl.source.empty() && !any_selected_up) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{} selects no RDMA device with a port up ({}): NCCL falls "
                                    "back to TCP sockets, a fraction of the link; name the "
                                    "devices whose port is up (ibstat, or sparkdoc snapshot)",
                                    selection_text(nccl), selected),
                        std::move(details));
  }
  if (!short_ports.empty()) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} leaves out half of a QSFP port ({}): NCCL moves the data over about "
                    "100 of the port's 200 Gb/s; name both halves on every node, "
                    "NCCL_IB_HCA={} (playbooks PR#103)",
                    selection_text(nccl), join(short_ports, "; "), suggestion),
        std::move(details));
  }
  if (halves.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{} RDMA device{}, none paired as a GB10 port's two halves; "
                                    "{} selects {}",
                                    net->rdma.size(), net->rdma.size() == 1 ? "" : "s",
                                    selection_text(nccl), selected),
                        std::move(details));
  }
  if (ports_up == 0) {
    return make_finding(kId, Verdict::kInfo,
                        "no QSFP port has a link up: this node is not cabled to another (NCCL "
                        "would find no RDMA path)",
                        std::move(details));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("NCCL uses both halves of {} QSFP port{} with a link up ({})",
                                  ports_up, ports_up == 1 ? "" : "s", selection_text(nccl)),
                      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::n1

namespace sparkdoc::checks {

const CheckInfo& n1_nccl_port_halves() {
  static constexpr CheckInfo kInfo{
      .id = "N1",
      .title = "NCCL uses both halves of the QSFP port",
      .reads =
          "RDMA devices and their ports (/sys/class/infiniband), their PCI addresses; "
          "NCCL_IB_HCA in the environment and nccl.conf",
      .symptom =
          "Two Sparks train, but all_gather bus bandwidth sits near half of what others report "
          "(~10 GB/s instead of ~20), or NCCL falls back to sockets at 2-3 GB/s",
      .cause =
          "One QSFP port of a GB10's ConnectX-7 is two PCIe Gen5 x4 endpoints of about 100 Gb/s "
          "each, two RDMA devices (rocep1s0f0 and roceP2p1s0f0). NCCL_SOCKET_IFNAME only picks "
          "the bootstrap interface; data goes over the devices NCCL_IB_HCA selects, and a list "
          "naming one of the two halves uses half the port.",
      .how_checked =
          "Pairs RDMA devices that share a bus:device.function across PCI domains 0000 and "
          "0002, finds the ports with a link up, and reads which devices NCCL_IB_HCA (from the "
          "environment, else nccl.conf; ^, = and :port as NCCL reads them) selects.",
      .fix =
          "export NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0 (both halves of the cabled port) on "
          "every node, with NCCL_SOCKET_IFNAME for the bootstrap interface.",
      .source = "field 2026 §6: dgx-spark-playbooks PR#103 (2026-08-17), playbooks#25",
      .keywords =
          "nccl ib hca nccl_ib_hca rdma roce connectx cx7 qsfp port half halves twin "
          "rocep1s0f0 rocep2p1s0f0 bandwidth busbw all_gather two sparks multi-node",
      .run = &n1::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
