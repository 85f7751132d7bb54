// F6 /dev/shm: a tmpfs from the same memory as everything else (on GB10, the GPU's too), filled
// by torch and NCCL IPC, whose sem.* and torch_* files outlive their owners (tonyd2wild's
// hard power-off under co-tenant load with shm_size 64gb, 2026-08-14; mlcommons/storage PR#532).
//   WARN  files whose owner has no live process hold 1 GiB or more (stale IPC: safe to remove
//         only because no process of that user is left); on unified memory, /dev/shm holds
//         more than 8 GiB (memory the GPU cannot have);
//   INFO  smaller stale files; PASS otherwise; SKIP when /dev/shm was not recorded.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f6 {
namespace {

constexpr uint64_t kStaleWarnBytes = kGiB;
constexpr uint64_t kUnifiedUsedWarnBytes = 8 * kGiB;

std::string files_text(uint64_t n) {
  return fmt::format("{} file{}", n, n == 1 ? "" : "s");
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "F6";
  if (!s.shm.ok())
    return make_finding(kId, Verdict::kSkip, "/dev/shm not read: " + s.shm.why_not());
  const sys::ShmScan& shm = *s.shm;
  std::vector<std::string> stale;
  uint64_t stale_bytes = 0;
  for (const sys::ShmFile& f : shm.files) {
    if (std::binary_search(shm.live_uids.begin(), shm.live_uids.end(), f.uid)) continue;
    stale_bytes += f.size_bytes;
    stale.push_back(fmt::format("/dev/shm/{} ({}, uid {}, no live process)", f.name,
                                format_binary(f.size_bytes), f.uid));
  }
  std::string head = fmt::format("/dev/shm {} with {} used in {}", format_binary(shm.size_bytes),
                                 format_binary(shm.used_bytes), files_text(shm.files_total));
  if (s.meminfo.ok() && s.meminfo->mem_total_bytes > 0) {
    head += fmt::format(" (size {:.0f} % of MemTotal)",
                        100.0 * static_cast<double>(shm.size_bytes) /
                            static_cast<double>(s.meminfo->mem_total_bytes));
  }
  // Counted before `stale` is moved into the finding: the arguments of one call may be
  // evaluated in any order.
  const std::string stale_files = files_text(stale.size());
  if (!stale.empty() && stale_bytes >= kStaleWarnBytes) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: {} in {} whose owner has no live process (stale "
                                    "IPC of killed runs); remove them (sudo rm /dev/shm/NAME)",
                                    head, format_binary(stale_bytes), stale_files),
                        std::move(stale));
  }
  if (p.unified_memory() && shm.used_bytes > kUnifiedUsedWarnBytes) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: it comes from the memory the GPU allocates from; find "
                                    "what holds it (ls -la /dev/shm) and keep container "
                                    "--shm-size to what the job needs",
                                    head),
                        std::move(stale));
  }
  if (!stale.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{}: {} ({}) whose owner has no live process, stale", head,
                                    stale_files, format_binary(stale_bytes)),
                        std::move(stale));
  }
  return make_finding(kId, Verdict::kPass, head + ", none stale");
}

}  // namespace
}  // namespace sparkdoc::checks::f6

namespace sparkdoc::checks {

const CheckInfo& f6_dev_shm() {
  static constexpr CheckInfo kInfo{
      .id = "F6",
      .title = "/dev/shm size, use and stale IPC files",
      .reads = "statvfs(/dev/shm); its files with owner and size; the owners of live processes",
      .symptom =
          "Memory missing that no process owns; a co-tenant load ends in a hard power-off "
          "with shm_size 64gb; semaphores or torch_* files of a run killed days ago",
      .cause =
          "/dev/shm is tmpfs: what is in it stays in memory until deleted, and on GB10 that "
          "memory is the GPU's pool too. torch and NCCL IPC files outlive a killed run.",
      .how_checked =
          "Compares /dev/shm's size and use with MemTotal and lists files whose owning "
          "user has no live process.",
      .fix =
          "Remove the stale files (sudo rm /dev/shm/NAME; only when their user has no live "
          "process), size container --shm-size to the job (10g, not 64gb, under co-tenants).",
      .source =
          "field 2026 §3: tonyd2wild/dgx-spark-hard-poweroff-fix#31 (2026-08-14), "
          "mlcommons/storage PR#532 (2026-06-26)",
      .keywords =
          "dev shm shared memory tmpfs stale ipc semaphore sem torch_ shm-size "
          "shm_size files leftover",
      .run = &f6::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
