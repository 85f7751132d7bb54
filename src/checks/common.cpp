#include "checks/common.h"

#include <fmt/format.h>

#include <algorithm>

#include "checks/ptx_isa.h"
#include "core/names.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/platform.h"

namespace sparkdoc::checks {

Finding make_finding(std::string_view id, Verdict verdict, std::string detail,
                     std::vector<std::string> details) {
  Finding f;
  f.id = std::string(id);
  f.verdict = verdict;
  f.detail = std::move(detail);
  f.details = std::move(details);
  return f;
}

std::optional<NativeVerdict> native_verdict(const Snapshot& s, const Workload& w,
                                            const facts::Platform& p, std::string* why) {
  if (!s.native_code.ok()) {
    const std::string& detail = s.native_code.missing().detail;
    if (why != nullptr) {
      *why = detail == "not read" || detail.empty()
                 ? "no native-code audit in this snapshot (sparkdoc audit runs one)"
                 : "no native-code audit: " + detail;
    }
    return std::nullopt;
  }
  std::optional<NativeTarget> target;
  if (w.arch) {
    target = NativeTarget{*w.arch, "--arch"};
  } else if (p.compute_capability) {
    target = NativeTarget{*p.compute_capability, p.gpu_name.empty() ? "GPU 0" : p.gpu_name};
  }
  NativeVerdict verdict = judge_native(*s.native_code, target);
  if (auto cuda = driver_cuda_version(s)) add_ptx_isa_notes(*s.native_code, *cuda, verdict);
  return verdict;
}

const PackageVerdict* audited_package(const NativeVerdict& v, std::string_view name) {
  const std::string key = pep503_name(name);
  for (const PackageVerdict& p : v.packages) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::vector<std::string> audit_notes(const NativeVerdict& v, NoteTopic topic, Severity severity,
                                     const std::vector<std::string_view>& except) {
  std::vector<std::string> out;
  for (const PackageVerdict& p : v.packages) {
    if (std::find(except.begin(), except.end(), p.key) != except.end()) continue;
    for (const NativeNote& n : p.notes) {
      if (n.topic != topic || n.severity != severity) continue;
      out.push_back(
          fmt::format("{}{}: {}", p.name, p.version.empty() ? "" : " " + p.version, n.text));
    }
  }
  return out;
}

bool id_wanted(std::string_view id, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  std::string lower = to_lower(id);
  return std::any_of(only.begin(), only.end(),
                     [&](const std::string& o) { return to_lower(trim(o)) == lower; });
}

const sys::Package* find_package(const sys::PackageList& list, std::string_view name) {
  for (const sys::Package& p : list.packages) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::optional<std::string> driver_version(const Snapshot& s) {
  if (s.nvidia_module.ok() && !s.nvidia_module->version.empty()) return s.nvidia_module->version;
  if (s.gpu.nvml.ok() && s.gpu.nvml->driver_version.ok()) return *s.gpu.nvml->driver_version;
  return std::nullopt;
}

std::string upstream_version(std::string_view debian_version) {
  std::string_view v = debian_version;
  if (size_t colon = v.find(':'); colon != std::string_view::npos) v = v.substr(colon + 1);
  if (size_t dash = v.rfind('-'); dash != std::string_view::npos) v = v.substr(0, dash);
  return std::string(v);
}

const net::NetReadings* network_or_skip(const Snapshot& s, std::string_view id, Finding* skip) {
  if (s.network.ok()) return &*s.network;
  *skip = make_finding(id, Verdict::kSkip, "network not read: " + s.network.why_not());
  return nullptr;
}

std::string rdma_label(const net::RdmaDevice& device) {
  if (device.netdevs.empty()) return device.name;
  return fmt::format("{} ({})", device.netdevs.front(), device.name);
}

const net::RdmaDevice* find_rdma(const net::NetReadings& net, std::string_view name) {
  for (const net::RdmaDevice& device : net.rdma) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

const net::Interface* find_interface(const net::NetReadings& net, std::string_view name) {
  for (const net::Interface& interface : net.interfaces) {
    if (interface.name == name) return &interface;
  }
  return nullptr;
}

}  // namespace sparkdoc::checks
