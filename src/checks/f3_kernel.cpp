// F3 known-bad kernels (field reports, as of 2026-10-17):
//   FAIL  CmaFree above CmaTotal in /proc/meminfo, whatever the kernel: kexec handover (KHO)
//         reserved pageblocks and returned them as MIGRATE_CMA (7.0.0-1019-nvidia: ~9.30 GiB,
//         CmaTotal 0 kB, CmaFree 940604 kB), so long-term pinning fails (ibv_reg_mr ENOMEM) and
//         NCCL init dies (NVIDIA/NV-Kernels PR#591);
//   WARN  7.0.0-1019-nvidia without kho=off on the command line (the same, before a load shows
//         it); 6.17.0-1008-nvidia (DGX OS 7.4.0: panics, PCI DOE timeouts, "Failed to query
//         NVIDIA devices" every boot, forum 366026);
//   PASS  otherwise; SKIP when neither the kernel release nor /proc/meminfo was read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f3 {
namespace {

bool has_kho_off(const Snapshot& s) {
  if (!s.kernel_boot.ok()) return false;
  for (std::string_view word : split_ws(s.kernel_boot->cmdline)) {
    if (word == "kho=off" || word == "kho=0") return true;
  }
  return false;
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "F3";
  if (!s.host.kernel_release.ok() && !s.meminfo.ok()) {
    return make_finding(kId, Verdict::kSkip,
                        "kernel release not read: " + s.host.kernel_release.why_not());
  }
  std::string kernel = s.host.kernel_release.value_or("an unread kernel");
  std::string cma = "CmaTotal/CmaFree not read (not in /proc/meminfo, or not recorded)";
  if (!s.meminfo.ok()) {
    cma = "/proc/meminfo " + s.meminfo.why_not();
  } else if (s.meminfo->cma_total_bytes && s.meminfo->cma_free_bytes) {
    uint64_t total = *s.meminfo->cma_total_bytes;
    uint64_t free = *s.meminfo->cma_free_bytes;
    if (free > total) {
      return make_finding(
          kId, Verdict::kFail,
          fmt::format("kernel {}: CmaFree {} above CmaTotal {}: kexec handover handed memory "
                      "back as CMA, so RDMA registration fails (ibv_reg_mr ENOMEM) and NCCL "
                      "init dies; boot with kho=off (a file in /etc/default/grub.d/, sudo "
                      "update-grub, reboot)",
                      kernel, format_binary(free), format_binary(total)));
    }
    cma = fmt::format("CmaFree {} within CmaTotal {}", format_binary(free), format_binary(total));
  }
  if (starts_with(kernel, "7.0.0-1019-nvidia") && !has_kho_off(s)) {
    std::string boot = s.kernel_boot.ok() ? "kho=off is not on its command line"
                                          : "its command line " + s.kernel_boot.why_not();
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("kernel {} ({}): its kexec handover takes ~9.3 GiB as CMA, "
                                    "breaking RDMA registration and NCCL; boot with kho=off or "
                                    "6.17.0-1031-nvidia ({})",
                                    kernel, boot, cma));
  }
  if (starts_with(kernel, "6.17.0-1008-nvidia")) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("kernel {} (DGX OS 7.4.0): aarch64 panics, PCI DOE timeouts "
                                    "and \"Failed to query NVIDIA devices\" reported (forum "
                                    "366026); update DGX OS ({})",
                                    kernel, cma));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("kernel {} is none the field reports name bad (as of "
                                  "2026-10-17); {}",
                                  kernel, cma));
}

}  // namespace
}  // namespace sparkdoc::checks::f3

namespace sparkdoc::checks {

const CheckInfo& f3_kernel() {
  static constexpr CheckInfo kInfo{
      .id = "F3",
      .title = "Known-bad kernels and kexec handover's CMA",
      .reads = "uname; /proc/meminfo CmaTotal and CmaFree; /proc/cmdline",
      .symptom =
          "NCCL init dies with ibv_reg_mr_iova2 ENOMEM even for 1 KB, while dmesg, rdma "
          "resource show and the port state show nothing; or the GPU is gone after an "
          "update (\"Failed to query NVIDIA devices\")",
      .cause =
          "7.0.0-1019-nvidia (a routine apt upgrade) turns kexec handover on: 4,761 "
          "pageblocks (~9.30 GiB) come back as MIGRATE_CMA, which long-term pinning cannot "
          "use. 6.17.0-1008-nvidia (DGX OS 7.4.0) panicked and lost the GPU on some units.",
      .how_checked =
          "Flags CmaFree above CmaTotal on any kernel, 7.0.0-1019-nvidia without "
          "kho=off on /proc/cmdline, and 6.17.0-1008-nvidia.",
      .fix =
          "Boot with kho=off (a file in /etc/default/grub.d/, sudo update-grub, reboot; undo: "
          "remove the file), or move to 6.17.0-1031-nvidia; update DGX OS past 7.4.0.",
      .source =
          "field 2026 §1: NVIDIA/NV-Kernels PR#591 (2026-09-14), "
          "MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#259 (2026-09-16), forum 366026",
      .keywords =
          "kernel 7.0.0-1019 6.17.0-1008 kho kexec handover cma cmafree cmatotal rdma "
          "ibv_reg_mr enomem nccl init pinning grub",
      .run = &f3::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
