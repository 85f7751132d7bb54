#include "report/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/printable.h"
#include "core/strings.h"
#include "model/native_json.h"
#include "report/picture.h"

namespace sparkdoc::report {
namespace {

using checks::CodeRuns;
using checks::NativeVerdict;
using checks::PackageVerdict;
using checks::Severity;
using nlohmann::json;

std::string label(std::optional<Severity> severity) {
  if (!severity) return "ok  ";
  switch (*severity) {
    case Severity::kFail:
      return "FAIL";
    case Severity::kWarn:
      return "WARN";
    case Severity::kInfo:
      return "INFO";
  }
  return "ok  ";
}

std::string gpu_text(const PackageVerdict& p) {
  if (p.gpu_files == 0) return "";
  std::vector<std::string> targets = p.sass_targets;
  targets.insert(targets.end(), p.ptx_targets.begin(), p.ptx_targets.end());
  std::string what = p.gpu == CodeRuns::kSass         ? "runs (SASS)"
                     : p.gpu == CodeRuns::kPtxJitOnly ? "PTX JIT only"
                     : p.gpu == CodeRuns::kDoesNotRun ? "does not run"
                                                      : "not judged";
  constexpr size_t kShown = 8;
  std::string list;
  for (size_t i = 0; i < targets.size() && i < kShown; ++i) {
    list += (i ? " " : "") + targets[i];
  }
  if (targets.size() > kShown) list += fmt::format(" +{}", targets.size() - kShown);
  return fmt::format("GPU code {} [{}]{}", what, list, p.nvfp4 ? ", NVFP4-capable" : "");
}

int rank(std::optional<Severity> s) {
  if (!s) return 3;
  return *s == Severity::kFail ? 0 : *s == Severity::kWarn ? 1 : 2;
}

std::string target_text(const NativeVerdict& v) {
  return v.target ? audit::compute_capability_text(v.target->cc) : "";
}

json package_json(const PackageVerdict& p) {
  json problems = json::array();
  for (const checks::LibraryProblem& l : p.problems) {
    problems.push_back({{"file", l.file},
                        {"soname", l.soname},
                        {"cuda_major", l.cuda_major ? json(*l.cuda_major) : json(nullptr)},
                        {"resolved", l.resolved},
                        {"cuda_library", l.cuda_library}});
  }
  json notes = json::array();
  for (const checks::NativeNote& n : p.notes) {
    notes.push_back({{"severity", checks::severity_name(n.severity)},
                     {"text", n.text},
                     {"topic", checks::topic_name(n.topic)}});
  }
  return {{"name", p.name},
          {"key", p.key},
          {"version", p.version},
          {"files", p.files},
          {"gpu_files", p.gpu_files},
          {"cuda_majors", p.cuda_majors},
          {"problems", std::move(problems)},
          {"gpu", checks::code_runs_name(p.gpu)},
          {"gpu_files_not_running", p.gpu_files_not_running},
          {"gpu_files_trapping", p.gpu_files_trapping},
          {"trapping_targets", p.trapping_targets},
          {"nvfp4", p.nvfp4},
          {"sass_targets", p.sass_targets},
          {"ptx_targets", p.ptx_targets},
          {"notes", std::move(notes)},
          {"errors", p.errors},
          {"foreign_files", p.foreign_files}};
}

// Files whose error is that they changed while they were read (an install beside the audit).
size_t changed_during_read(const audit::NativeAudit& facts) {
  return static_cast<size_t>(
      std::count_if(facts.files.begin(), facts.files.end(),
                    [](const audit::NativeFile& f) { return f.changed_during_read; }));
}

json file_json(const audit::NativeFile& f, const checks::FileVerdict& v) {
  json j{{"file", f.file}, {"package", f.package}};
  if (!f.error.empty()) {
    j["error"] = f.error;
    j["changed_during_read"] = f.changed_during_read;
    return j;
  }
  j["machine"] = f.machine;
  j["foreign"] = v.foreign;
  json needs = json::array();
  for (const audit::LibraryNeed& n : f.needs) {
    needs.push_back(
        {{"soname", n.soname}, {"found", n.path ? json(*n.path) : json(nullptr)}, {"via", n.via}});
  }
  checks::GpuCodeVerdict targets = checks::judge_gpu_code(f.gpu_code, gpu::ComputeCapability{});
  std::vector<std::string> sass;
  std::vector<std::string> ptx;
  // judge_gpu_code gives the targets distinct and in the architectures' order.
  for (audit::GpuTarget t : targets.sass_targets) sass.push_back(audit::sass_name(t));
  for (audit::GpuTarget t : targets.ptx_targets) ptx.push_back(audit::ptx_name(t));
  j["needs"] = std::move(needs);
  j["cuda_majors"] = v.cuda_majors;
  j["gpu_code"] = !sass.empty() || !ptx.empty();
  j["sass_targets"] = std::move(sass);
  j["ptx_targets"] = std::move(ptx);
  if (v.gpu) {
    j["gpu"] = checks::code_runs_name(v.gpu->run);
    j["nvfp4"] = v.gpu->nvfp4;
    j["containers"] = {{"sass", v.gpu->containers_sass},
                       {"ptx_jit_only", v.gpu->containers_ptx_only},
                       {"none", v.gpu->containers_none},
                       {"trapping", v.gpu->containers_trapping}};
  }
  // The facts the verdict stands on: containers grouped by their targets, with each PTX
  // entry's ISA version.
  j["code_groups"] = f.gpu_code;
  return j;
}

// GPU generations a training job meets: A100, A10/RTX 30, L4/L40/RTX 40, H100/H200, B200,
// B300, RTX PRO 6000/RTX 50, GB10.
constexpr std::array<gpu::ComputeCapability, 8> kMatrixColumns{
    {{8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}}};

bool cc_less(const gpu::ComputeCapability& a, const gpu::ComputeCapability& b) {
  return a.major != b.major ? a.major < b.major : a.minor < b.minor;
}

// `html`: the cells say "SASS", "PTX JIT" or "none"; the terminal's "SASS", "PTX" and "-".
std::optional<Grid> audit_grid(const audit::NativeAudit& facts, const NativeVerdict& v, bool html) {
  std::vector<const PackageVerdict*> rows;
  for (const PackageVerdict& p : v.packages) {
    if (p.gpu_files > 0) rows.push_back(&p);
  }
  if (rows.empty()) return std::nullopt;
  std::vector<gpu::ComputeCapability> columns(kMatrixColumns.begin(), kMatrixColumns.end());
  if (v.target && std::find(columns.begin(), columns.end(), v.target->cc) == columns.end()) {
    columns.insert(std::upper_bound(columns.begin(), columns.end(), v.target->cc, cc_less),
                   v.target->cc);
  }
  Grid grid;
  grid.corner = "package";
  for (const PackageVerdict* p : rows) grid.rows.push_back(printable(p->name));
  grid.cells.resize(rows.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    const gpu::ComputeCapability cc = columns[c];
    grid.columns.push_back(fmt::format("sm_{}{}", cc.major, cc.minor));
    if (v.target && v.target->cc == cc) grid.marked_column = c;
    // One definition of "runs": the verdict the audit would give with --arch for this column.
    NativeVerdict at = cc == (v.target ? v.target->cc : gpu::ComputeCapability{})
                           ? v
                           : checks::judge_native(facts, checks::NativeTarget{cc, "matrix"});
    for (size_t r = 0; r < rows.size(); ++r) {
      CodeRuns runs = CodeRuns::kNotJudged;
      bool traps = false;
      for (const PackageVerdict& p : at.packages) {
        if (p.name != rows[r]->name) continue;
        runs = p.gpu;
        traps = !p.gpu_files_trapping.empty();
      }
      GridCell cell;
      // NVIDIA's libraries load kernels from elsewhere than .nv_fatbin: what it lacks is not
      // "does not run" (the audit's note says so too).
      if (checks::fatbin_is_not_all_gpu_code(rows[r]->key) &&
          (runs == CodeRuns::kDoesNotRun || runs == CodeRuns::kPtxJitOnly)) {
        runs = CodeRuns::kNotJudged;
      }
      switch (runs) {
        case CodeRuns::kSass:
          cell = traps ? GridCell{"trap", "none"} : GridCell{"SASS", "sass"};
          break;
        case CodeRuns::kPtxJitOnly:
          cell = {html ? "PTX JIT" : "PTX", "ptx"};
          break;
        case CodeRuns::kDoesNotRun:
          cell = {html ? "none" : "-", "none"};
          break;
        default:
          cell = {html ? "not judged" : "n/j", ""};
      }
      grid.cells[r].push_back(std::move(cell));
    }
  }
  return grid;
}

constexpr std::string_view kMatrixLegend =
    "SASS runs as built; PTX is JIT-compiled by the driver at the first load (minutes, cached "
    "after); - does not run (\"no kernel image is available\"); n/j not judged: NVIDIA's own "
    "libraries load kernels from elsewhere than .nv_fatbin (cuFFT from .ldata); trap: its kernels "
    "there stop at vLLM's sm120-only guard";

}  // namespace

std::string render_audit_matrix_text(const audit::NativeAudit& facts, const NativeVerdict& v) {
  auto grid = audit_grid(facts, v, false);
  if (!grid) return "";
  std::string out = fmt::format(
      "GPU code by target{}\n",
      v.target ? fmt::format(" ([{}] is the one judged)", grid->columns[*grid->marked_column])
               : std::string());
  out += render_grid_text(*grid);
  out += wrap_text("  " + std::string(kMatrixLegend), 80, 2) + "\n";
  return out;
}

std::string render_audit_html(const audit::NativeAudit& facts, const NativeVerdict& v) {
  std::string body = fmt::format(
      "<p>{}; {}; torch CUDA {}; {} shared objects, {} with GPU code, {} unreadable</p>\n",
      html_escape(facts.site_packages),
      v.target ? fmt::format("target {} ({})", target_text(v), html_escape(v.target->source))
               : std::string("no target GPU"),
      html_escape(facts.torch_cuda.empty() ? "unknown" : facts.torch_cuda), v.files, v.gpu_files,
      v.errors);
  body += "<section id=\"matrix\">\n<h2>GPU code by target</h2>\n";
  if (auto grid = audit_grid(facts, v, true)) {
    body += render_grid_html(*grid);
    body +=
        "<p>green: SASS runs as built; orange: only PTX, JIT-compiled by the driver at the "
        "first load; red: does not run (\"no kernel image is available\"); grey: not "
        "judged, NVIDIA's own libraries loading kernels from elsewhere than .nv_fatbin (cuFFT "
        "from .ldata). The target judged is outlined.</p>\n";
  } else {
    body += "<p>No package has GPU code.</p>\n";
  }
  body += "</section>\n<section id=\"packages\">\n<h2>Packages</h2>\n";
  for (const PackageVerdict& p : v.packages) {
    if (p.notes.empty() && p.gpu_files == 0 && p.errors.empty()) continue;
    body += fmt::format("<h3>{} {}</h3>\n", html_escape(p.name), html_escape(p.version));
    for (const checks::NativeNote& n : p.notes) {
      body +=
          fmt::format("<p>{}: {}</p>\n", checks::severity_name(n.severity), html_escape(n.text));
    }
    for (const std::string& e : p.errors) body += "<p>unreadable: " + html_escape(e) + "</p>\n";
  }
  body += "</section>\n";
  return render_picture_page("sparkdoc audit", body,
                             "sparkdoc audit; each column judged as --arch would judge it");
}

std::string render_audit_text(const audit::NativeAudit& facts, const NativeVerdict& v,
                              const AuditTextOptions& options) {
  std::string out = fmt::format("sparkdoc audit: {}\n", printable(facts.site_packages));
  std::string target = !v.target
                           ? "no target GPU (GPU code listed, not judged; --arch 12.1 judges it)"
                           : fmt::format("target {} ({})", target_text(v), v.target->source);
  const size_t changed = changed_during_read(facts);
  out += fmt::format(
      "{}; torch CUDA {}; {} shared objects, {} with GPU code, {} unreadable{}{}; "
      "{:.0f} ms\n\n",
      target, facts.torch_cuda.empty() ? "unknown" : facts.torch_cuda, v.files, v.gpu_files,
      v.errors,
      changed == 0 ? ""
                   : fmt::format(" ({} changed while being read: run the audit again once "
                                 "installs have finished)",
                                 changed),
      v.foreign_files == 0 ? ""
                           : fmt::format(", {} built for another machine than this {} "
                                         "(not judged)",
                                         v.foreign_files, printable(v.machine)),
      facts.elapsed_ms);
  std::vector<const PackageVerdict*> shown;
  for (const PackageVerdict& p : v.packages) {
    if (options.all || !p.notes.empty() || p.gpu_files > 0 || !p.errors.empty()) {
      shown.push_back(&p);
    }
  }
  std::stable_sort(
      shown.begin(), shown.end(), [&](const PackageVerdict* x, const PackageVerdict* y) {
        return rank(checks::worst_severity(x->notes)) < rank(checks::worst_severity(y->notes));
      });
  size_t fails = 0;
  size_t warns = 0;
  for (const PackageVerdict* p : shown) {
    std::optional<Severity> severity = checks::worst_severity(p->notes);
    fails += severity == Severity::kFail;
    warns += severity == Severity::kWarn;
    std::vector<std::string> parts;
    parts.push_back(fmt::format("{} file{}", p->files, p->files == 1 ? "" : "s"));
    if (!p->cuda_majors.empty()) {
      std::vector<std::string> majors;
      for (int m : p->cuda_majors) majors.push_back(std::to_string(m));
      parts.push_back("CUDA " + join(majors, "+"));
    }
    if (std::string gpu = gpu_text(*p); !gpu.empty()) parts.push_back(gpu);
    // Package names, versions and paths come from the tree audited: one line each.
    out += fmt::format("{} {}{}: {}\n", label(severity), printable(p->name),
                       p->version.empty() ? "" : " " + printable(p->version), join(parts, "; "));
    for (const checks::NativeNote& n : p->notes) {
      out += fmt::format("     {}: {}\n", checks::severity_name(n.severity), printable(n.text));
    }
    for (const std::string& e : p->errors) {
      out += fmt::format("     unreadable: {}\n", printable(e));
    }
  }
  out += fmt::format("\n{} package{} with native code: {} FAIL, {} WARN\n", v.packages.size(),
                     v.packages.size() == 1 ? "" : "s", fails, warns);
  return out;
}

json render_audit_json(const audit::NativeAudit& facts, const NativeVerdict& v) {
  json packages = json::array();
  for (const PackageVerdict& p : v.packages) packages.push_back(package_json(p));
  json summary{{"site_packages", facts.site_packages},
               {"target", target_text(v)},
               {"target_source", v.target ? v.target->source : ""},
               {"torch_cuda", facts.torch_cuda},
               {"files", v.files},
               {"gpu_files", v.gpu_files},
               {"errors", v.errors},
               {"changed_during_read", changed_during_read(facts)},
               {"machine", v.machine},
               {"foreign_files", v.foreign_files},
               {"elapsed_ms", facts.elapsed_ms},
               {"packages", std::move(packages)}};
  json files = json::array();
  for (size_t i = 0; i < facts.files.size() && i < v.file_verdicts.size(); ++i) {
    files.push_back(file_json(facts.files[i], v.file_verdicts[i]));
  }
  return {{"audit", std::move(summary)}, {"files", std::move(files)}};
}

int audit_exit_status(const NativeVerdict& v) {
  for (const PackageVerdict& p : v.packages) {
    if (checks::worst_severity(p.notes) == Severity::kFail) return 1;
  }
  return 0;
}

}  // namespace sparkdoc::report
