// F2 NVIDIA driver errors in the kernel log since boot (facts/kernel_log.h names them):
//   FAIL  a bad register read (0xbadf5600: hardware, forum 364499 [2nd]); an Xid after which
//         the GPU needs a reset (62, 79, 119, 120, 154; 119/120 are the GSP timeouts of a driver
//         off its pairing: see F1) or other GSP and start-up failures;
//   WARN  any other Xid but the application faults (13, 31, 43, 45): NVIDIA's Xid catalog says
//         what each means;
//   WARN  RM allocation failures (NV_ERR_NO_MEMORY, 0x51, ...): the precursor of the silent host
//         wedge that needs a power cycle (ogkm#1358, forum 371180): the box survived this time;
//   INFO  only application-fault Xids (a program crashed; the GPU is fine);
//   PASS  none; SKIP when the kernel log could not be read (dmesg_restrict: the reason says so).
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/kernel_log.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f2 {
namespace {

enum class XidClass { kApplication, kReset, kOther };

XidClass xid_class(int xid) {
  if (facts::xid_is_application_fault(xid)) return XidClass::kApplication;
  return facts::xid_needs_reset(xid) ? XidClass::kReset : XidClass::kOther;
}

std::string xid_list(const std::map<int, uint64_t>& xids, XidClass which) {
  std::vector<std::string> parts;
  for (const auto& [xid, count] : xids) {
    if (xid_class(xid) != which) continue;
    parts.push_back(fmt::format("Xid {} ({}x)", xid, count));
  }
  return join(parts, ", ");
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "F2";
  if (!s.kernel_log.ok()) {
    return make_finding(kId, Verdict::kSkip, "kernel log not read: " + s.kernel_log.why_not());
  }
  const sys::KernelLog& log = *s.kernel_log;
  facts::DriverLogSummary sum = facts::summarize_driver_log(log);
  std::vector<std::string> details;
  for (const auto& [kind, text] : sum.first) details.push_back("first: " + text);
  if (log.nvidia_records > log.lines.size()) {
    details.push_back(fmt::format("only the first {} of {} driver records were kept",
                                  log.lines.size(), log.nvidia_records));
  }
  if (log.lost) details.push_back("the kernel's ring overwrote records while they were read");
  std::string app_xids = xid_list(sum.xids, XidClass::kApplication);
  std::string sick_xids = xid_list(sum.xids, XidClass::kReset);
  std::string other_xids = xid_list(sum.xids, XidClass::kOther);
  if (sum.bad_register > 0) {
    return make_finding(kId, Verdict::kFail,
                        fmt::format("{} bad register reads (0xbadf5600) since boot: a hardware "
                                    "fault; run the field diagnostic (sudo ./partnerdiag "
                                    "--field) and ask for an RMA",
                                    sum.bad_register),
                        std::move(details));
  }
  if (!sick_xids.empty() || sum.gsp_or_init > 0) {
    std::string what =
        sick_xids.empty() ? fmt::format("{} GSP or start-up failures", sum.gsp_or_init) : sick_xids;
    if (!sick_xids.empty() && sum.gsp_or_init > 0) {
      what += fmt::format(" and {} GSP or start-up failures", sum.gsp_or_init);
    }
    return make_finding(kId, Verdict::kFail,
                        what +
                            " since boot: the driver or its GSP firmware failed; see F1 for "
                            "the pairing, reboot, and reinstall the DGX OS bundle if it "
                            "comes back",
                        std::move(details));
  }
  if (!other_xids.empty()) {
    return make_finding(kId, Verdict::kWarn,
                        other_xids +
                            " since boot: the driver reported GPU errors; look each up "
                            "in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) "
                            "before a long run",
                        std::move(details));
  }
  if (sum.no_memory > 0) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} NVRM allocation failures (NV_ERR_NO_MEMORY, 0x51) since boot: the "
                    "precursor of the silent host wedge; reboot before a long run, keep "
                    "--gpu-memory-utilization at 0.85 or below, and watch it (sparkdoc watch)",
                    sum.no_memory),
        std::move(details));
  }
  if (!app_xids.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        app_xids +
                            " since boot: faults a program caused (it crashed or was "
                            "killed); the GPU itself reported no error",
                        std::move(details));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("no NVIDIA driver errors among {} kernel log records since "
                                  "boot ({} name the driver)",
                                  log.records, log.nvidia_records),
                      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::f2

namespace sparkdoc::checks {

const CheckInfo& f2_driver_errors() {
  static constexpr CheckInfo kInfo{
      .id = "F2",
      .title = "NVIDIA driver errors since boot (NVRM, Xid, GSP)",
      .reads = "the kernel log since boot (/dev/kmsg)",
      .symptom =
          "The host freezes (SSH and desktop gone, no OOM kill, no panic) and needs a "
          "power cycle; or the GPU vanishes, reboots bring Xid 119/120",
      .cause =
          "When an RM system-memory allocation fails the kernel neither reclaims nor kills, "
          "and driver memory is not charged to cgroups; the NV_ERR_NO_MEMORY lines come "
          "first, the wedge follows. Xid 119/120 and GSP timeouts mean the driver and its "
          "firmware disagree.",
      .how_checked =
          "Reads /dev/kmsg without blocking and keeps the driver's records; counts RM "
          "allocation failures (NV_ERR_NO_MEMORY, 0x00000051, _memdescAllocInternal, "
          "nvCheckOkFailedNoLog, _iovaspaceCreateMappingDataFromMemDesc), Xids by "
          "number, GSP and start-up failures and bad register reads. Needs root when "
          "kernel.dmesg_restrict = 1.",
      .fix =
          "After NV_ERR_NO_MEMORY: reboot, keep vLLM's --gpu-memory-utilization at 0.85 or "
          "below, call torch.cuda.empty_cache() between samples, run headless, watch the run. "
          "After Xid 119/120: restore the DGX OS pairing (F1). Bad register reads: field "
          "diagnostic and RMA.",
      .source =
          "field 2026 §1: NVIDIA/open-gpu-kernel-modules#1358 (2026-09-14), forum 371180, "
          "vllm-project/recipes PR#632, forum 378200 (2026-07-28)",
      .keywords =
          "nvrm xid gsp nv_err_no_memory 0x51 wedge freeze hang kernel log dmesg kmsg "
          "119 120 79 power cycle host frozen memdescallocinternal",
      .run = &f2::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
