#include "audit/render.h"

#include <fmt/format.h>

#include <algorithm>

#include "audit/rules.h"
#include "core/strings.h"

namespace sparkdoc::audit {
namespace {

std::string label(const std::string& severity) {
  if (severity == "fail") return "FAIL";
  if (severity == "warn") return "WARN";
  if (severity == "info") return "INFO";
  return "ok  ";
}

std::string gpu_text(const PackageAudit& p) {
  if (p.gpu_files == 0) return "";
  std::vector<std::string> targets = p.sass_targets;
  targets.insert(targets.end(), p.ptx_targets.begin(), p.ptx_targets.end());
  std::string what = p.gpu == "sass"           ? "runs (SASS)"
                     : p.gpu == "ptx_jit_only" ? "PTX JIT only"
                     : p.gpu == "does_not_run" ? "does not run"
                                               : "not judged";
  constexpr size_t kShown = 8;
  std::string list;
  for (size_t i = 0; i < targets.size() && i < kShown; ++i) {
    list += (i ? " " : "") + targets[i];
  }
  if (targets.size() > kShown) list += fmt::format(" +{}", targets.size() - kShown);
  return fmt::format("GPU code {} [{}]{}", what, list, p.nvfp4 ? ", NVFP4-capable" : "");
}

}  // namespace

std::string render_text(const NativeAudit& a, const RenderOptions& options) {
  std::string out = fmt::format("sparkdoc audit: {}\n", a.site_packages);
  std::string target = a.target.empty()
                           ? "no target GPU (GPU code listed, not judged; --arch 12.1 judges it)"
                           : fmt::format("target {} ({})", a.target, a.target_source);
  out += fmt::format("{}; torch CUDA {}; {} shared objects, {} with GPU code, {} unreadable; "
                     "{:.0f} ms\n\n",
                     target, a.torch_cuda.empty() ? "unknown" : a.torch_cuda, a.files,
                     a.gpu_files, a.errors, a.elapsed_ms);
  std::vector<const PackageAudit*> shown;
  for (const PackageAudit& p : a.packages) {
    if (options.all || !p.notes.empty() || p.gpu_files > 0 || !p.errors.empty()) shown.push_back(&p);
  }
  auto rank = [](const PackageAudit* p) {
    std::string s = worst_severity(p->notes);
    return s == "fail" ? 0 : s == "warn" ? 1 : s == "info" ? 2 : 3;
  };
  std::stable_sort(shown.begin(), shown.end(),
                   [&](const PackageAudit* x, const PackageAudit* y) { return rank(x) < rank(y); });
  size_t fails = 0;
  size_t warns = 0;
  for (const PackageAudit* p : shown) {
    std::string severity = worst_severity(p->notes);
    fails += severity == "fail";
    warns += severity == "warn";
    std::vector<std::string> facts;
    facts.push_back(fmt::format("{} file{}", p->files, p->files == 1 ? "" : "s"));
    if (!p->cuda_majors.empty()) {
      std::vector<std::string> majors;
      for (int m : p->cuda_majors) majors.push_back(std::to_string(m));
      facts.push_back("CUDA " + join(majors, "+"));
    }
    if (std::string gpu = gpu_text(*p); !gpu.empty()) facts.push_back(gpu);
    out += fmt::format("{} {}{}: {}\n", label(severity), p->name,
                       p->version.empty() ? "" : " " + p->version, join(facts, "; "));
    for (const Note& n : p->notes) out += fmt::format("     {}: {}\n", n.severity, n.text);
    for (const std::string& e : p->errors) out += fmt::format("     unreadable: {}\n", e);
  }
  out += fmt::format("\n{} package{} with native code: {} FAIL, {} WARN\n", a.packages.size(),
                     a.packages.size() == 1 ? "" : "s", fails, warns);
  return out;
}

int audit_exit_status(const NativeAudit& a) {
  for (const PackageAudit& p : a.packages) {
    if (worst_severity(p.notes) == "fail") return 1;
  }
  return 0;
}

}  // namespace sparkdoc::audit
