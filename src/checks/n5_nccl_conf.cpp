// N5 No nccl.conf left behind. NCCL reads /etc/nccl.conf (or $NCCL_CONF_FILE) at init and takes
// every setting the environment does not: images leave one tuned for another topology, such as
// NCCL_IB_USE_INLINE=1 and NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS=1 (field-2026 §6: luxingcom#1),
// which then apply to every job on the node without appearing in any launch script.
//   WARN  an nccl.conf with settings the environment does not override;
//   INFO  an nccl.conf whose every setting the environment overrides, or with none;
//   PASS  no nccl.conf; SKIP when the network was not recorded or the file could not be read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"

namespace sparkdoc::checks::n5 {
namespace {

constexpr std::string_view kId = "N5";

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (!net->nccl_conf.ok()) {
    if (net->nccl_conf.missing().why == Why::kAbsent) {
      return make_finding(kId, Verdict::kPass,
                          "no nccl.conf: NCCL takes its settings from the environment only");
    }
    return make_finding(kId, Verdict::kSkip, "nccl.conf not read: " + net->nccl_conf.why_not());
  }
  const net::NcclConfFile& conf = *net->nccl_conf;
  std::vector<std::string> applied;
  std::vector<std::string> details;
  for (const auto& [name, value] : conf.settings) {
    if (auto env = s.env.find(name); env != s.env.end()) {
      details.push_back(fmt::format("{}={} (the environment's {} wins)", name, value, env->second));
    } else {
      applied.push_back(fmt::format("{}={}", name, value));
      details.push_back(fmt::format("{}={} (applies)", name, value));
    }
  }
  if (!applied.empty()) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} sets {} for every NCCL job on this node, unseen in any launch script; "
                    "keep it only if this cluster was tuned for it, else move it aside (sudo mv "
                    "{} {}.disabled) on every node",
                    conf.path, join(applied, ", "), conf.path, conf.path),
        std::move(details));
  }
  return make_finding(
      kId, Verdict::kInfo,
      conf.settings.empty()
          ? fmt::format("{} exists with no settings", conf.path)
          : fmt::format("{} exists; the environment overrides every setting", conf.path),
      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::n5

namespace sparkdoc::checks {

const CheckInfo& n5_nccl_conf() {
  static constexpr CheckInfo kInfo{
      .id = "N5",
      .title = "No stale nccl.conf",
      .reads = "/etc/nccl.conf or $NCCL_CONF_FILE, and the NCCL_* environment",
      .symptom =
          "Two nodes with the same launch script behave differently in NCCL; a setting nobody "
          "exported shows up in NCCL_DEBUG=INFO's output",
      .cause =
          "NCCL reads nccl.conf at init and applies every setting the environment does not "
          "set. Container images and earlier experiments leave one behind.",
      .how_checked = "Reads the file NCCL would read and lists the settings that apply.",
      .fix =
          "Move it aside on every node (sudo mv /etc/nccl.conf /etc/nccl.conf.disabled; undo: "
          "move it back), and put the settings the job needs in its launch environment.",
      .source = "field 2026 §6: luxingcom#1",
      .keywords =
          "nccl.conf nccl conf etc stale leftover nccl_ib_use_inline prepost settings "
          "image multi-node",
      .run = &n5::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
