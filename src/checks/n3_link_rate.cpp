// N3 The ConnectX-7 links are up at their rate. A GB10 QSFP port trains at 200 Gb/s and both of
// its halves report that rate; a link that came up slower, or a port with one half down, moves
// a fraction of the data. An unused port shows "Down" with rate 40 (geerlingguy/sbc-reviews#92).
// A degraded initialisation (DGX OS 7.5.0, firmware 28.45.4028) showed 200G and clean counters
// yet carried 13 Gb/s: a rate read from sysfs cannot see that, so the PASS line says to measure.
//   WARN  a ConnectX-7 (MT4129) port up below 200 Gb/s; a QSFP port with one half up and the
//         other down; a port up whose interface has no carrier;
//   PASS  every port that is up at 200 Gb/s or more with both halves;
//   INFO  no port is up, or RDMA devices other than ConnectX-7 (rates listed);
//   SKIP  the network was not recorded, or there is no RDMA device.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/network.h"

namespace sparkdoc::checks::n3 {
namespace {

constexpr std::string_view kId = "N3";
constexpr std::string_view kConnectX7 = "MT4129";
constexpr double kConnectX7Gbps = 200;

std::string rate_text(const net::RdmaPort& port) {
  if (port.rate_gbps) return fmt::format("{:g} Gb/s", *port.rate_gbps);
  return port.rate.empty() ? "rate unread" : port.rate;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (net->rdma.empty()) {
    return make_finding(kId, Verdict::kSkip, "no RDMA device: no link to judge");
  }
  std::vector<std::string> details;
  std::vector<std::string> problems;
  unsigned up = 0;
  bool all_cx7 = true;
  for (const net::RdmaDevice& device : net->rdma) {
    bool cx7 = device.hca_type == kConnectX7;
    all_cx7 = all_cx7 && cx7;
    for (const net::RdmaPort& port : device.ports) {
      bool active = facts::port_active(port);
      details.push_back(
          fmt::format("{} port {}: {}, {}, {}{}", rdma_label(device), port.number,
                      port.state.empty() ? "state unread" : port.state,
                      port.phys_state.empty() ? "physical state unread" : port.phys_state,
                      rate_text(port), device.fw_ver.empty() ? "" : ", firmware " + device.fw_ver));
      if (!active) continue;
      ++up;
      if (cx7 && port.rate_gbps && *port.rate_gbps < kConnectX7Gbps) {
        problems.push_back(fmt::format("{} is up at {} (ConnectX-7 trains at 200)",
                                       rdma_label(device), rate_text(port)));
      }
      for (const std::string& name : device.netdevs) {
        const net::Interface* interface = find_interface(*net, name);
        if (interface && interface->carrier && !*interface->carrier) {
          problems.push_back(fmt::format("{} has no carrier while its RDMA port says up", name));
        }
      }
    }
  }
  for (const facts::PortHalves& pair : facts::cx7_port_halves(*net)) {
    std::vector<std::string> halves_up;
    std::vector<std::string> halves_down;
    for (const std::string& name : pair.devices) {
      const net::RdmaDevice* device = find_rdma(*net, name);
      (device && facts::device_active(*device) ? halves_up : halves_down).push_back(name);
    }
    if (!halves_up.empty() && !halves_down.empty()) {
      problems.push_back(fmt::format("QSFP port {} has {} up but {} down: half the port's rate",
                                     pair.function, join(halves_up, ", "),
                                     join(halves_down, ", ")));
    }
  }
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: reseat or replace the cable (Amphenol NJAAKK-N911 and "
                                    "Luxshare LMTQF022-SD-R are approved), check ibstat on both "
                                    "nodes, and remove /etc/nvidia/cx7-hotplug-enabled (N6)",
                                    join(problems, "; ")),
                        std::move(details));
  }
  if (up == 0) {
    return make_finding(kId, Verdict::kInfo,
                        "no RDMA port is up: this node is not cabled to another",
                        std::move(details));
  }
  if (!all_cx7) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{} RDMA port{} up; rates listed (the 200 Gb/s rule is "
                                    "ConnectX-7's)",
                                    up, up == 1 ? "" : "s"),
                        std::move(details));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("{} ConnectX-7 port{} up at 200 Gb/s with both halves; sysfs "
                                  "cannot see a degraded link that reports 200G, so measure once "
                                  "(ib_write_bw for 10 s per half: ~90 Gb/s each is healthy)",
                                  up, up == 1 ? "" : "s"),
                      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::n3

namespace sparkdoc::checks {

const CheckInfo& n3_link_rate() {
  static constexpr CheckInfo kInfo{
      .id = "N3",
      .title = "ConnectX-7 links up at their rate",
      .reads =
          "state, physical state and rate of every RDMA port, the carrier of its "
          "interfaces, the adapter type and firmware",
      .symptom =
          "Two Sparks cabled, but NCCL or TCP moves a fraction of 200 Gb/s; a 200G link that "
          "will not train; one half of the port missing in ibstat",
      .cause =
          "A link that trained slower than 200 Gb/s, a QSFP port with one of its two PCIe "
          "halves down, an unapproved cable, or the hot-plug flag of January 2026. A degraded "
          "initialisation can also report 200G and still carry 13 Gb/s.",
      .how_checked =
          "Reads each port's state and rate from /sys/class/infiniband and each interface's "
          "carrier, and compares the two halves of each GB10 QSFP port.",
      .fix =
          "Reseat or replace the cable (approved: Amphenol NJAAKK-N911, Luxshare "
          "LMTQF022-SD-R), remove /etc/nvidia/cx7-hotplug-enabled and reboot both, then measure "
          "each half with ib_write_bw for 10 s (~90 Gb/s each is healthy).",
      .source =
          "field 2026 §6: geerlingguy/sbc-reviews#92, dgx-spark-playbooks PR#108 "
          "(2026-08-24), forum 373628, digchick/dgx-spark-200g-link-fix",
      .keywords =
          "link rate speed 200g 100g connectx cx7 ibstat port down half cable qsfp "
          "degraded slow ib_write_bw two sparks multi-node",
      .run = &n3::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
