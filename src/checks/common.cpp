#include "checks/common.h"

#include <fmt/format.h>

#include <algorithm>

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

const audit::NativeAudit* native_audit(const Snapshot& s, const facts::Platform& p,
                                       std::string* why) {
  auto say = [&](std::string text) -> const audit::NativeAudit* {
    if (why != nullptr) *why = std::move(text);
    return nullptr;
  };
  if (!s.native_code.ok()) {
    const std::string& detail = s.native_code.missing().detail;
    return say(detail == "not read" || detail.empty()
                   ? "no native-code audit in this snapshot (sparkdoc audit runs one)"
                   : "no native-code audit: " + detail);
  }
  const audit::NativeAudit& a = *s.native_code;
  std::string platform_cc = p.compute_capability ? fmt::format("{}.{}", p.compute_capability->major,
                                                               p.compute_capability->minor)
                                                 : "";
  if (a.target != platform_cc) {
    return say(fmt::format("the native-code audit was judged for {} but the GPU is {}",
                           a.target.empty() ? "no GPU" : a.target,
                           platform_cc.empty() ? "not read" : platform_cc));
  }
  return &a;
}

const audit::PackageAudit* audited_package(const audit::NativeAudit& a, std::string_view name) {
  const std::string key = pep503_name(name);
  for (const audit::PackageAudit& p : a.packages) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::vector<std::string> audit_notes(const audit::NativeAudit& a, std::string_view topic,
                                     std::string_view severity,
                                     const std::vector<std::string_view>& except) {
  std::vector<std::string> out;
  for (const audit::PackageAudit& p : a.packages) {
    if (std::find(except.begin(), except.end(), p.key) != except.end()) continue;
    for (const audit::Note& n : p.notes) {
      if (n.topic != topic || n.severity != severity) continue;
      out.push_back(fmt::format("{}{}: {}", p.name, p.version.empty() ? "" : " " + p.version,
                                n.text));
    }
  }
  return out;
}

}  // namespace sparkdoc::checks
