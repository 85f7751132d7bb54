// F1 driver, kernel and DGX OS pairing (field reports 2025-10 to 2026-10; NVIDIA: only the DGX
// OS bundle is guaranteed on a Spark). The driver is the loaded module's version (else NVML's),
// the kernel uname's, the bundle /etc/dgx-release's DGX_OTA_VERSION or DGX_SWBUILD_VERSION,
// judged against the dated table below and the installed packages:
//   WARN  a driver outside the 580 branch (590 and later, 595, 610, 615: unsupported on Spark,
//         GPU "not supported" or gone); 580.173.02 on OTA2607,
//         which pairs 580.159.03 (Xid 119, forum 378200 [2nd]); firmware package of another
//         version than the driver; datacenter packages (-server, fabricmanager, nvswitch);
//         a driver package installed that is not the one loaded (reboot pending);
//   PASS  the bundle's own driver; INFO another 580 driver, or no /etc/dgx-release, or
//         580.95.05 / 580.126.09 (cuBLAS and cuDNN internal errors under load, fixed in 580.142
//         and 580.173.02: forum 380948, second-hand, so said rather than warned about);
//   SKIP  not a DGX Spark, or no driver version read.
#include <fmt/format.h>

#include <array>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/platform.h"

namespace sparkdoc::checks::f1 {
namespace {

struct Bundle {
  std::string_view ota;     // "OTA2607"; "" when the release had no OTA name
  std::string_view dgx_os;  // "7.5.0"
  std::string_view date;
  std::string_view driver;
  std::string_view kernels;
  std::string_view source;
};

// The reference's timeline, as of 2026-10-17.
constexpr std::array<Bundle, 3> kBundles = {{
    {"", "7.2.3", "2025-10", "580.95.05", "6.11.0-1016", "workbench-example-llama2-finetune#4"},
    {"", "7.4.0", "2026-02-12", "580.126.09", "6.17.0-1008", "forum 366026"},
    {"OTA2607", "7.5.0", "2026-07-15", "580.159.03", "6.17.0-1021 to -1029", "[2nd]"},
}};

const Bundle* bundle_of(const std::map<std::string, std::string>& release) {
  for (const char* key : {"DGX_OTA_VERSION", "DGX_SWBUILD_VERSION"}) {
    auto it = release.find(key);
    if (it == release.end()) continue;
    for (const Bundle& b : kBundles) {
      if ((!b.ota.empty() && contains(it->second, b.ota)) || starts_with(it->second, b.dgx_os)) {
        return &b;
      }
    }
  }
  return nullptr;
}

std::string release_label(const std::map<std::string, std::string>& release) {
  for (const char* key : {"DGX_OTA_VERSION", "DGX_SWBUILD_VERSION", "DGX_PRETTY_NAME"}) {
    auto it = release.find(key);
    if (it != release.end() && !it->second.empty()) return it->second;
  }
  return "an unnamed DGX OS release";
}

void package_problems(const sys::PackageList& list, const std::string& driver,
                      std::vector<std::string>& problems) {
  std::vector<std::string> datacenter;
  for (const sys::Package& p : list.packages) {
    if (starts_with(p.name, "nvidia-firmware-580-") && p.name != "nvidia-firmware-580-" + driver) {
      problems.push_back(
          fmt::format("{} is installed beside driver {}: driver and firmware must "
                      "be one version",
                      p.name, driver));
    }
    bool server = starts_with(p.name, "nvidia-") && contains(p.name, "-server");
    if (server || starts_with(p.name, "nvidia-fabricmanager") ||
        starts_with(p.name, "nvidia-nvswitch")) {
      datacenter.push_back(p.name);
    }
  }
  if (!datacenter.empty()) {
    problems.push_back(
        fmt::format("datacenter packages do not belong on a Spark: {}; purge them "
                    "(sudo apt purge {})",
                    join(datacenter, ", "), join(datacenter, " ")));
  }
  if (const sys::Package* d = find_package(list, "nvidia-driver-580-open")) {
    std::string installed = upstream_version(d->version);
    if (installed != driver) {
      problems.push_back(
          fmt::format("nvidia-driver-580-open {} is installed but {} is loaded: "
                      "reboot to load it",
                      installed, driver));
    }
  }
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform& p) {
  constexpr std::string_view kId = "F1";
  bool dgx_os = s.os_release.ok() && s.os_release->dgx_release.ok();
  if (p.kind != facts::PlatformKind::kDgxSpark && !dgx_os) {
    if (!s.os_release.ok()) {
      return make_finding(kId, Verdict::kSkip, "not a DGX Spark; " + s.os_release.why_not());
    }
    return make_finding(kId, Verdict::kSkip,
                        "not a DGX Spark: the pairing table is DGX OS's (" + p.description + ")");
  }
  auto driver = driver_version(s);
  if (!driver) return make_finding(kId, Verdict::kSkip, "no NVIDIA driver version was read");
  std::string kernel = s.host.kernel_release.value_or("an unread kernel");
  std::vector<std::string> problems;
  std::vector<std::string> notes;
  if (!starts_with(*driver, "580.")) {
    problems.push_back(
        fmt::format("driver {} is not of the 580 branch DGX OS ships: NVIDIA "
                    "calls other branches unsupported on a Spark (GPU \"not "
                    "supported\" or not found); install the bundle's 580 driver",
                    *driver));
  } else if (*driver == "580.95.05" || *driver == "580.126.09") {
    // Second-hand evidence: said, not warned about.
    notes.push_back(
        fmt::format("driver {} gives CUBLAS_STATUS_INTERNAL_ERROR and "
                    "CUDNN_BACKEND_API_FAILED under load (fixed in 580.142 and "
                    "580.173.02, forum 380948 [2nd]): update DGX OS",
                    *driver));
  }
  const Bundle* bundle = nullptr;
  std::string label =
      s.os_release.ok() ? "not DGX OS (no /etc/dgx-release)" : "DGX OS release not recorded";
  if (dgx_os) {
    const auto& release = *s.os_release->dgx_release;
    bundle = bundle_of(release);
    label = "DGX OS " + release_label(release);
  } else if (s.os_release.ok()) {
    notes.push_back(
        "no /etc/dgx-release: not DGX OS, so no bundle to pair with; only the DGX OS "
        "bundle is guaranteed on a Spark");
  } else {
    notes.push_back("DGX OS release " + s.os_release.why_not());
  }
  if (bundle != nullptr && bundle->ota == "OTA2607" && *driver == "580.173.02") {
    problems.push_back(
        "580.173.02 from apt on OTA2607, which pairs 580.159.03: Xid 119 GSP "
        "timeouts reported (forum 378200 [2nd]); install 580.159.03 and hold it "
        "(apt-mark hold), or apt dist-upgrade with fwupdmgr upgrade");
  } else if (bundle != nullptr && bundle->driver != *driver) {
    notes.push_back(
        fmt::format("driver {} is not the {} bundle's {} ({}); only the bundle is "
                    "guaranteed",
                    *driver, bundle->dgx_os, bundle->driver, bundle->date));
  }
  if (s.packages.ok()) {
    package_problems(*s.packages, *driver, problems);
  } else {
    notes.push_back("packages " + s.packages.why_not());
  }
  std::string head = fmt::format("driver {}, kernel {}, {}", *driver, kernel, label);
  if (!problems.empty()) {
    std::vector<std::string> details = problems;
    for (const auto& n : notes) details.push_back(n);
    return make_finding(kId, Verdict::kWarn, head + ": " + problems.front(), std::move(details));
  }
  if (bundle != nullptr && bundle->driver == *driver && notes.empty()) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("{}: the bundle's own pairing ({} of {}, kernels {}; table "
                                    "of 2026-10-17)",
                                    head, bundle->driver, bundle->date, bundle->kernels),
                        std::move(notes));
  }
  std::string why =
      notes.empty() ? std::string("no bundle in the table (2026-10-17) names it") : notes.front();
  return make_finding(kId, Verdict::kInfo, head + ": " + why, std::move(notes));
}

}  // namespace
}  // namespace sparkdoc::checks::f1

namespace sparkdoc::checks {

const CheckInfo& f1_driver_pairing() {
  static constexpr CheckInfo kInfo{
      .id = "F1",
      .title = "Driver, kernel and DGX OS pairing",
      .reads =
          "/proc/driver/nvidia/version or NVML's driver version; uname; /etc/dgx-release; "
          "installed packages (/var/lib/dpkg/status)",
      .symptom =
          "nvidia-smi says \"No devices were found\" or \"NVIDIA-GB10 not supported\"; CUDA "
          "error 999; reboots with Xid 119/120 GSP errors; CUBLAS_STATUS_INTERNAL_ERROR "
          "under load",
      .cause =
          "apt upgrade moved the driver, firmware or kernel off the DGX OS bundle (580.173.02 "
          "on OTA2607, which pairs 580.159.03), or datacenter packages (-server, "
          "fabricmanager, nvswitch) or another driver branch were installed. NVIDIA "
          "guarantees only the DGX OS bundle on a Spark.",
      .how_checked =
          "Compares the loaded driver with a dated table of DGX OS releases (7.2.3 "
          "580.95.05; 7.4.0 580.126.09; 7.5.0/OTA2607 580.159.03; as of 2026-10-17), "
          "and the installed driver, firmware and datacenter packages with it.",
      .fix =
          "Install the bundle's driver and hold it (sudo apt-mark hold), or sudo apt "
          "dist-upgrade && sudo fwupdmgr refresh && sudo fwupdmgr upgrade; purge -server, "
          "fabricmanager and nvswitch packages; a recovery image as a last resort.",
      .source =
          "field 2026 §1: forum 378200 (2026-07-28), 380948, 366026; ggml-org/llama.cpp#24933",
      .keywords =
          "driver kernel pairing ota ota2607 dgx os release apt upgrade firmware xid 119 "
          "gsp not supported no devices were found 580.159.03 580.173.02 hold",
      .run = &f1::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
