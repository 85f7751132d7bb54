// N6 No ConnectX-7 hot-plug flag. dgx-spark-mlnx-hotplug's /etc/nvidia/cx7-hotplug-enabled, of
// the January 2026 hot-plug change, keeps a 200G link from training (field-2026 §6:
// digchick/dgx-spark-200g-link-fix).
//   WARN  the flag exists; PASS it does not; SKIP when the network was not recorded.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"

namespace sparkdoc::checks::n6 {
namespace {

constexpr std::string_view kId = "N6";

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (net->cx7_hotplug_flag) {
    return make_finding(kId, Verdict::kWarn,
                        "/etc/nvidia/cx7-hotplug-enabled exists: with it a 200G ConnectX-7 link "
                        "does not train; move it aside (sudo mv /etc/nvidia/cx7-hotplug-enabled "
                        "/etc/nvidia/cx7-hotplug-enabled.off) and reboot both nodes");
  }
  return make_finding(kId, Verdict::kPass, "no /etc/nvidia/cx7-hotplug-enabled");
}

std::optional<std::string> applies(const Snapshot&, const facts::Platform& p) {
  if (p.kind == facts::PlatformKind::kDgxSpark) return std::nullopt;
  return "not a DGX Spark: the ConnectX-7 hot-plug flag is GB10's";
}

}  // namespace
}  // namespace sparkdoc::checks::n6

namespace sparkdoc::checks {

const CheckInfo& n6_cx7_hotplug() {
  static constexpr CheckInfo kInfo{
      .id = "N6",
      .title = "No ConnectX-7 hot-plug flag",
      .reads = "/etc/nvidia/cx7-hotplug-enabled",
      .symptom =
          "After the January 2026 updates a 200G link between two Sparks will not come "
          "up, or trains at a lower rate",
      .cause =
          "The hot-plug support of dgx-spark-mlnx-hotplug, switched on by this flag file, "
          "breaks 200G link training.",
      .how_checked = "Looks for the flag file.",
      .fix = "Move the flag aside on both nodes (undo: move it back) and reboot both.",
      .source = "field 2026 §6: digchick/dgx-spark-200g-link-fix",
      .keywords = "hotplug hot-plug cx7 connectx flag 200g link train mlnx two sparks",
      .run = &n6::judge,
      .applies = &n6::applies,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
