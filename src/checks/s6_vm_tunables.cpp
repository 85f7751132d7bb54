// S6 vm tunables left modified (000 §6). 000 raises min_free_kbytes to 1048576 and
// vfs_cache_pressure to 500 for the model-load window and restores them afterwards; left in
// place, the kernel keeps 1 GB free and evicts file pages five times harder for every later job.
//   WARN  min_free_kbytes == 1048576, or vfs_cache_pressure != 100 (the kernel default; 500 is
//         the load-window value). min_free_kbytes is only flagged at the seed's exact value,
//         because its default scales with RAM (000 restores 45166 on its Spark).
//   PASS  otherwise, with the values; SKIP when neither was read.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"
#include "facts/gpu_users.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s6 {
namespace {

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S6";
  constexpr int64_t kLoadMinFreeKb = 1048576;
  constexpr int64_t kLoadCachePressure = 500;
  constexpr int64_t kDefaultCachePressure = 100;
  const sys::VmTunables& vm = s.vm;
  if (!vm.min_free_kbytes.ok() && !vm.vfs_cache_pressure.ok()) {
    return make_finding(kId, Verdict::kSkip,
                        fmt::format("vm tunables not read (min_free_kbytes: {}; "
                                    "vfs_cache_pressure: {})",
                                    vm.min_free_kbytes.reason(), vm.vfs_cache_pressure.reason()));
  }
  std::vector<std::string> values;
  std::vector<std::string> modified;
  bool load_window = false;
  if (vm.min_free_kbytes.ok()) {
    values.push_back(fmt::format("min_free_kbytes={}", *vm.min_free_kbytes));
    if (*vm.min_free_kbytes == kLoadMinFreeKb) {
      modified.push_back(values.back());
      load_window = true;
    }
  } else {
    values.push_back("min_free_kbytes not read (" + vm.min_free_kbytes.reason() + ")");
  }
  if (vm.vfs_cache_pressure.ok()) {
    values.push_back(fmt::format("vfs_cache_pressure={}", *vm.vfs_cache_pressure));
    if (*vm.vfs_cache_pressure != kDefaultCachePressure) {
      modified.push_back(values.back());
      load_window = load_window || *vm.vfs_cache_pressure == kLoadCachePressure;
    }
  } else {
    values.push_back("vfs_cache_pressure not read (" + vm.vfs_cache_pressure.reason() + ")");
  }
  if (vm.swappiness.ok()) values.push_back(fmt::format("swappiness={}", *vm.swappiness));
  if (modified.empty()) return make_finding(kId, Verdict::kPass, join(values, ", "));
  std::string why = load_window ? "left from a previous load window" : "changed from the default";
  return make_finding(kId, Verdict::kWarn,
                      fmt::format("{} {}; restore vfs_cache_pressure=100 and min_free_kbytes to "
                                  "its boot value (000 restores 45166; the default scales with "
                                  "RAM): sparkdoc clean --restore",
                                  join(modified, ", "), why));
}

}  // namespace
}  // namespace sparkdoc::checks::s6

namespace sparkdoc::checks {

const CheckInfo& s6_vm_tunables() {
  static constexpr CheckInfo kInfo{
      .id = "S6",
      .title = "vm tunables left from a load window",
      .reads = "/proc/sys/vm/min_free_kbytes, vfs_cache_pressure and swappiness",
      .symptom =
          "Long after a model load, the machine keeps 1 GB free and evicts file cache "
          "aggressively for every job",
      .cause =
          "000's load procedure sets min_free_kbytes=1048576 and vfs_cache_pressure=500 for the "
          "load window and is meant to put them back afterwards.",
      .how_checked =
          "Compares min_free_kbytes with the load-window value and vfs_cache_pressure with the "
          "default 100.",
      .fix =
          "Restore vfs_cache_pressure=100 and min_free_kbytes to its boot value (sparkdoc clean "
          "--restore).",
      .source = "000 §6",
      .keywords =
          "min_free_kbytes vfs_cache_pressure sysctl vm tunables page cache eviction restore",
      .run = &s6::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
