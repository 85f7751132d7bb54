#include "checks/native_code.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/cuda_sonames.h"
#include "core/names.h"
#include "core/paths.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

using audit::ArchVariant;
using audit::GpuTarget;

bool exactly(GpuTarget target, gpu::ComputeCapability device) {
  return static_cast<int>(target.major()) == device.major &&
         static_cast<int>(target.minor()) == device.minor;
}

bool same_major_at_least(GpuTarget target, gpu::ComputeCapability device) {
  return static_cast<int>(target.major()) == device.major &&
         static_cast<int>(target.minor()) <= device.minor;
}

// Best use first, so that a container's verdict is the maximum over its entries.
enum Use : uint8_t { kUseNone = 0, kUsePtx = 1, kUseSass = 2 };

template <class T>
void insert_sorted(std::vector<T>& items, const T& item) {
  auto at = std::lower_bound(items.begin(), items.end(), item);
  if (at == items.end() || *at != item) items.insert(at, item);
}

void add_sorted_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
  sort_target_names(to);
}

int runs_rank(CodeRuns runs) {
  switch (runs) {
    case CodeRuns::kDoesNotRun:
      return 4;
    case CodeRuns::kPtxJitOnly:
      return 3;
    case CodeRuns::kNotJudged:
      return 2;
    case CodeRuns::kSass:
      return 1;
    case CodeRuns::kNoGpuCode:
      break;
  }
  return 0;
}

// Libraries of the driver and of the process are not a package's to provide; the audit does
// not record the driver's, and these are always there.
bool is_driver_library(std::string_view soname) {
  return soname == "libcuda.so.1" || soname == "libnvidia-ml.so.1";
}

// Rules over one package's verdict, with the facts they need.
struct RuleContext {
  std::optional<NativeTarget> target;
  std::optional<int> torch_cuda_major;
  std::string torch_cuda;          // "13.0"
  std::string bnb_cuda_version;    // BNB_CUDA_VERSION
  std::vector<std::string> files;  // the package's shared objects, relative
  std::vector<std::string> guarded_imports;  // NativeAudit::guarded_imports
  std::string machine;                       // NativeAudit::machine
  std::map<std::string, std::vector<std::string>> foreign;  // machine -> its files here
};

NativeNote note(Severity severity, std::string text) {
  return NativeNote{severity, NoteTopic::kPackage, std::move(text)};
}

bool any_file(const RuleContext& c, std::string_view prefix) {
  return std::any_of(c.files.begin(), c.files.end(),
                     [&](const std::string& f) { return file_name(f).starts_with(prefix); });
}

std::string target_text(const RuleContext& c) {
  return c.target ? audit::compute_capability_text(c.target->cc) : "";
}

std::string arch_list_hint(const RuleContext& c) {
  if (!c.target) return "";
  return fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\"", target_text(c));
}

std::string targets_text(const PackageVerdict& p) {
  std::vector<std::string> all = p.sass_targets;
  for (const auto& t : p.ptx_targets) all.push_back(t);
  return all.empty() ? "no SASS or PTX" : join(all, ", ");
}

// "a.so" or "a.so and 3 more".
std::string files_text(const std::vector<std::string>& files) {
  if (files.empty()) return "";
  if (files.size() == 1) return files.front();
  return fmt::format("{} and {} more", files.front(), files.size() - 1);
}

void library_notes(const PackageVerdict& p, const RuleContext& c, std::vector<NativeNote>& out) {
  const bool nvidia_wheel = p.key.starts_with("nvidia-");
  // Group by soname so a package with fifty extensions gets one line per library.
  std::map<std::string, std::vector<const LibraryProblem*>> by_soname;
  for (const LibraryProblem& problem : p.problems) by_soname[problem.soname].push_back(&problem);
  for (const auto& [soname, problems] : by_soname) {
    const LibraryProblem& first = *problems.front();
    std::vector<std::string> files;
    for (const auto* problem : problems) files.push_back(problem->file);
    std::string who = files_text(files);
    const bool cuda = is_cuda_soname(soname);
    if (!first.resolved) {
      std::string major;
      if (first.cuda_major && c.torch_cuda_major && *first.cuda_major != *c.torch_cuda_major) {
        major = fmt::format(
            " (a CUDA {} library; torch here is CUDA {}: install the package's "
            "build for CUDA {})",
            *first.cuda_major, c.torch_cuda, *c.torch_cuda_major);
      }
      out.push_back(note(cuda && !nvidia_wheel ? Severity::kFail : Severity::kWarn,
                         fmt::format("{} needs {}, which the loader will not find{}: importing "
                                     "it fails with \"{}: cannot open shared object file\"",
                                     who, soname, major, soname)));
    } else if (first.cuda_major && c.torch_cuda_major && *first.cuda_major != *c.torch_cuda_major) {
      if (nvidia_wheel) {
        out.push_back(
            note(Severity::kWarn, fmt::format("{} is a CUDA {} library beside a CUDA {} torch: "
                                              "a leftover wheel; pip uninstall {}",
                                              who, *first.cuda_major, c.torch_cuda, p.name)));
      } else {
        out.push_back(
            note(Severity::kFail,
                 fmt::format("{} needs {} (CUDA {}) but torch is CUDA {}: two "
                             "CUDA runtimes in one process; install the "
                             "package's build for CUDA {}",
                             who, soname, *first.cuda_major, c.torch_cuda, *c.torch_cuda_major)));
      }
    }
  }
}

}  // namespace

bool fatbin_is_not_all_gpu_code(std::string_view package_key) {
  return package_key.starts_with("nvidia-");
}

namespace {

void gpu_notes(const PackageVerdict& p, const RuleContext& c, std::vector<NativeNote>& out) {
  if (!c.target || p.gpu_files == 0) return;
  const std::string target = target_text(c);
  // NVIDIA's own libraries load kernels that .nv_fatbin does not hold: cuFFT keeps its
  // per-architecture kernels in .ldata (libcufft.so.12 of CUDA 13 lists only sm_75 there and
  // runs on every GPU CUDA 13 supports). What their .nv_fatbin lacks is no verdict.
  if (fatbin_is_not_all_gpu_code(p.key)) {
    if (p.gpu == CodeRuns::kDoesNotRun || p.gpu == CodeRuns::kPtxJitOnly) {
      out.push_back(
          note(Severity::kInfo, fmt::format("its .nv_fatbin has no SASS for {} ({}); NVIDIA's "
                                            "libraries load further kernels from elsewhere "
                                            "(cuFFT from .ldata), so this is not judged",
                                            target, targets_text(p))));
    }
    return;
  }
  if (!p.gpu_files_trapping.empty()) {
    out.push_back(
        note(Severity::kFail,
             fmt::format("{} {} {} kernels built with the sm120-only guard: on {} the driver picks "
                         "them and they stop with \"This kernel only supports sm120.\" and "
                         "cudaErrorLaunchFailure; use a build whose guard admits the 12.x family "
                         "(enable_sm120_family), or build for 12.0f instead of 12.1",
                         files_text(p.gpu_files_trapping),
                         p.gpu_files_trapping.size() == 1 ? "has" : "have",
                         join(p.trapping_targets, ", "), target)));
  }
  if (p.gpu == CodeRuns::kDoesNotRun) {
    out.push_back(
        note(Severity::kFail,
             fmt::format("no GPU code for {} in {} (built for {}): kernel launches fail with "
                         "\"no kernel image is available for execution on the device\"; "
                         "rebuild with {}",
                         target, files_text(p.gpu_files_not_running), targets_text(p),
                         arch_list_hint(c))));
  } else if (p.gpu == CodeRuns::kPtxJitOnly) {
    out.push_back(
        note(Severity::kWarn, fmt::format("no SASS for {} ({}): the driver JIT-compiles PTX on "
                                          "first use (minutes; cached in ~/.nv/ComputeCache)",
                                          target, targets_text(p))));
  }
}

// A file built for another machine (a wheel for another platform, a folder copied from an
// x86_64 box to a Spark) is refused by the loader: named by path it does not load, met in a
// search it is passed over (elf/machine.h). It is named, not judged: its needs would resolve
// on its own machine, and whether its GPU code runs is no question here.
void architecture_notes(const PackageVerdict& p, const RuleContext& c,
                        std::vector<NativeNote>& out) {
  for (const auto& [machine, files] : c.foreign) {
    out.push_back(note(Severity::kWarn,
                       fmt::format("{} {} built for {}, this machine is {}: not loadable here; "
                                   "reinstall {} on this machine",
                                   files_text(files), files.size() == 1 ? "is" : "are", machine,
                                   c.machine, p.name)));
  }
}

void tag(std::vector<NativeNote>& notes, size_t first, NoteTopic topic) {
  for (size_t i = first; i < notes.size(); ++i) notes[i].topic = topic;
}

std::vector<NativeNote> package_notes(const PackageVerdict& p, const RuleContext& c) {
  std::vector<NativeNote> out;
  library_notes(p, c, out);
  tag(out, 0, NoteTopic::kLibraries);
  size_t first = out.size();
  gpu_notes(p, c, out);
  tag(out, first, NoteTopic::kGpuCode);
  first = out.size();
  const std::string& key = p.key;
  const bool blackwell12 = c.target && c.target->cc.major == 12;

  if (!p.errors.empty()) {
    // A shared object that cannot be read (truncated, damaged) cannot be loaded either: the
    // import fails with "file too short" or "invalid ELF header". Nothing else about the
    // package is known from it, so it is never "ok".
    out.push_back(note(Severity::kWarn,
                       fmt::format("{} of its {} shared object{} cannot be read (truncated or "
                                   "damaged: an interrupted install?): importing {} fails; "
                                   "reinstall it (pip install --force-reinstall {}{})",
                                   p.errors.size(), p.files, p.files == 1 ? "" : "s", p.name, p.key,
                                   p.version.empty() ? "" : "==" + p.version)));
  }

  if (key == "flash-attn" && !any_file(c, "flash_attn_2_cuda") && !any_file(c, "flash_attn_3") &&
      !any_file(c, "_flash_attn")) {
    out.push_back(note(Severity::kFail,
                       "flash-attn is installed without its CUDA extension "
                       "(no flash_attn_2_cuda*.so): `import flash_attn` fails; uninstall "
                       "it and use attn_implementation=\"sdpa\""));
  }
  if (key == "bitsandbytes") {
    std::string want = c.bnb_cuda_version;
    if (want.empty() && !c.torch_cuda.empty()) {
      want = c.torch_cuda;
      want.erase(std::remove(want.begin(), want.end(), '.'), want.end());
    }
    std::vector<std::string> have;
    for (const std::string& f : c.files) {
      std::string_view name = file_name(f);
      if (name.starts_with("libbitsandbytes_cuda")) {
        std::string_view rest = name.substr(std::string_view("libbitsandbytes_").size());
        have.emplace_back(rest.substr(0, rest.find('.')));
      }
    }
    if (!want.empty() && std::find(have.begin(), have.end(), "cuda" + want) == have.end()) {
      out.push_back(
          note(Severity::kFail,
               fmt::format("no libbitsandbytes_cuda{}.so for CUDA {}{} (has: {}): "
                           "bitsandbytes cannot load its GPU library; install a build for "
                           "this CUDA or build it with -DCOMPUTE_CAPABILITY including {}",
                           want, c.bnb_cuda_version.empty() ? c.torch_cuda : want,
                           c.bnb_cuda_version.empty() ? "" : " (BNB_CUDA_VERSION)",
                           have.empty() ? "none" : join(have, ", "),
                           c.target ? std::to_string(c.target->cc.major * 10 + c.target->cc.minor)
                                    : "the GPU's")));
    }
  }
  const bool scan_guarded = std::find(c.guarded_imports.begin(), c.guarded_imports.end(),
                                      "selective_scan_cuda") != c.guarded_imports.end();
  if (key == "mamba-ssm" && !any_file(c, "selective_scan_cuda") && scan_guarded) {
    out.push_back(note(Severity::kInfo,
                       "mamba-ssm has no selective_scan_cuda, and its selective_scan_interface.py "
                       "imports it inside try/except (000 §4's patch): Mamba-2 models "
                       "(Nemotron-H) run on Triton kernels; Mamba-1's CUDA path is unavailable"));
  } else if (key == "mamba-ssm" && !any_file(c, "selective_scan_cuda")) {
    out.push_back(note(Severity::kWarn,
                       "mamba-ssm was built without selective_scan_cuda (a build that sees no GPU "
                       "skips it silently): `import selective_scan_cuda` fails unless "
                       "mamba_ssm/ops/selective_scan_interface.py wraps it in try/except; Mamba-2 "
                       "models (Nemotron-H) use Triton kernels and do not need it"));
  }
  if (key == "causal-conv1d" && !any_file(c, "causal_conv1d_cuda")) {
    out.push_back(note(Severity::kFail,
                       "causal-conv1d is installed without its CUDA extension "
                       "(no causal_conv1d_cuda*.so): rebuild with "
                       "CAUSAL_CONV1D_FORCE_BUILD=TRUE and a TORCH_CUDA_ARCH_LIST "
                       "that includes 12.0;12.1+PTX"));
  }
  tag(out, first, NoteTopic::kPackage);
  first = out.size();
  if (blackwell12 && p.gpu_files > 0 && !p.nvfp4 && p.gpu != CodeRuns::kDoesNotRun &&
      (key == "torch" || key == "vllm" || key == "flash-attn" || key == "xformers" ||
       key == "transformer-engine" || key == "bitsandbytes")) {
    const int sm = c.target->cc.major * 10 + c.target->cc.minor;
    out.push_back(
        note(Severity::kInfo, fmt::format("no sm_{0}a / sm_{1}f code that runs on {2}: NVFP4 "
                                          "block-scaled kernels are not in this build (G7); source "
                                          "builds need TORCH_CUDA_ARCH_LIST=\"{2}a\"",
                                          sm, c.target->cc.major * 10, target_text(c))));
  }
  tag(out, first, NoteTopic::kNvfp4);
  first = out.size();
  architecture_notes(p, c, out);
  tag(out, first, NoteTopic::kArchitecture);
  return out;
}

}  // namespace

bool target_name_less(const std::string& a, const std::string& b) {
  auto ta = audit::parse_target(a), tb = audit::parse_target(b);
  if (ta && tb) return *ta != *tb ? *ta < *tb : a < b;
  if (ta || tb) return ta.has_value();
  return a < b;
}

void sort_target_names(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end(), target_name_less);
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

bool sass_runs_on(GpuTarget target, gpu::ComputeCapability device) {
  switch (target.variant) {
    case ArchVariant::kArchSpecific:
      return exactly(target, device);
    case ArchVariant::kPlain:
    case ArchVariant::kFamilySpecific:
      return same_major_at_least(target, device);
  }
  return false;
}

bool ptx_jit_runs_on(GpuTarget target, gpu::ComputeCapability device) {
  switch (target.variant) {
    case ArchVariant::kArchSpecific:
      return exactly(target, device);
    case ArchVariant::kFamilySpecific:
      return same_major_at_least(target, device);
    case ArchVariant::kPlain:
      return static_cast<int>(target.major()) < device.major ||
             (static_cast<int>(target.major()) == device.major &&
              static_cast<int>(target.minor()) <= device.minor);
  }
  return false;
}

bool allows_block_scaled_fp4(GpuTarget target) {
  const uint32_t major = target.major();
  return target.variant != ArchVariant::kPlain && major >= 10 && major <= 12;
}

std::string_view code_runs_name(CodeRuns runs) {
  switch (runs) {
    case CodeRuns::kNoGpuCode:
      return "no_gpu_code";
    case CodeRuns::kSass:
      return "sass";
    case CodeRuns::kPtxJitOnly:
      return "ptx_jit_only";
    case CodeRuns::kDoesNotRun:
      return "does_not_run";
    case CodeRuns::kNotJudged:
      return "not_judged";
  }
  return "?";
}

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kFail:
      return "fail";
  }
  return "?";
}

std::string_view topic_name(NoteTopic topic) {
  switch (topic) {
    case NoteTopic::kLibraries:
      return "libraries";
    case NoteTopic::kGpuCode:
      return "gpu_code";
    case NoteTopic::kPackage:
      return "package";
    case NoteTopic::kNvfp4:
      return "nvfp4";
    case NoteTopic::kArchitecture:
      return "architecture";
  }
  return "?";
}

GpuCodeVerdict judge_gpu_code(std::span<const audit::CodeGroup> code,
                              gpu::ComputeCapability device) {
  GpuCodeVerdict v;
  uint8_t best_overall = kUseNone;
  for (const audit::CodeGroup& group : code) {
    uint8_t best = kUseNone;
    uint32_t picked_sm = 0;  // the driver takes the runnable SASS of the highest SM
    for (GpuTarget t : group.sass) {
      insert_sorted(v.sass_targets, t);
      if (!sass_runs_on(t, device)) continue;
      best = kUseSass;
      picked_sm = std::max(picked_sm, t.sm);
      if (allows_block_scaled_fp4(t)) v.nvfp4 = true;
    }
    bool traps = false;
    for (GpuTarget t : group.sm120_only) {
      if (t.sm != picked_sm || !sass_runs_on(t, device)) continue;
      traps = true;
      insert_sorted(v.trapping_targets, t);
    }
    if (traps) v.containers_trapping += group.containers;
    for (const audit::PtxEntry& e : group.ptx) {
      insert_sorted(v.ptx_targets, e.target);
      if (!ptx_jit_runs_on(e.target, device)) continue;
      best = std::max<uint8_t>(best, kUsePtx);
      if (allows_block_scaled_fp4(e.target)) v.nvfp4 = true;
    }
    best_overall = std::max(best_overall, best);
    switch (best) {
      case kUseSass:
        v.containers_sass += group.containers;
        break;
      case kUsePtx:
        v.containers_ptx_only += group.containers;
        break;
      default:
        v.containers_none += group.containers;
        break;
    }
  }
  if (code.empty()) {
    v.run = CodeRuns::kNoGpuCode;
  } else if (best_overall == kUseSass) {
    v.run = CodeRuns::kSass;
  } else if (best_overall == kUsePtx) {
    v.run = CodeRuns::kPtxJitOnly;
  } else {
    v.run = CodeRuns::kDoesNotRun;
  }
  return v;
}

std::optional<Severity> worst_severity(const std::vector<NativeNote>& notes) {
  std::optional<Severity> worst;
  for (const NativeNote& n : notes) {
    if (!worst || n.severity > *worst) worst = n.severity;
  }
  return worst;
}

NativeVerdict judge_native(const audit::NativeAudit& facts,
                           const std::optional<NativeTarget>& target) {
  NativeVerdict out;
  out.target = target;
  out.machine = facts.machine;
  if (!facts.error.empty()) {
    out.errors = 1;
    PackageVerdict none;
    none.name = "(site-packages)";
    none.errors.push_back(facts.error);
    out.packages.push_back(std::move(none));
    return out;
  }
  const std::optional<int> torch_major = cuda_major_of_version(facts.torch_cuda);
  std::map<std::string, PackageVerdict> packages;
  std::map<std::string, RuleContext> contexts;
  out.file_verdicts.reserve(facts.files.size());
  for (const audit::NativeFile& f : facts.files) {
    FileVerdict& fv = out.file_verdicts.emplace_back();
    PackageVerdict& p = packages[f.package];
    if (p.name.empty()) {
      p.name = f.package;
      p.key = pep503_name(f.package);
      if (auto it = facts.versions.find(f.package); it != facts.versions.end()) {
        p.version = it->second;
      }
    }
    contexts[f.package].files.push_back(f.file);
    ++p.files;
    ++out.files;
    if (!f.error.empty()) {
      p.errors.push_back(f.error);
      ++out.errors;
      continue;
    }
    if (!facts.machine.empty() && !f.machine.empty() && f.machine != facts.machine) {
      fv.foreign = true;
      p.foreign_files.push_back(f.file);
      contexts[f.package].foreign[f.machine].push_back(f.file);
      ++out.foreign_files;
      continue;
    }
    std::set<int> majors(p.cuda_majors.begin(), p.cuda_majors.end());
    std::set<int> file_majors;
    for (const audit::LibraryNeed& need : f.needs) {
      if (is_driver_library(need.soname)) continue;
      std::optional<int> major = cuda_major_of_soname(need.soname);
      if (major) file_majors.insert(*major);
      bool mismatch = major && torch_major && *major != *torch_major;
      if (need.path && !mismatch) continue;
      p.problems.push_back(LibraryProblem{f.file, need.soname, major, need.path.has_value(),
                                          is_cuda_soname(need.soname)});
    }
    fv.cuda_majors.assign(file_majors.begin(), file_majors.end());
    majors.insert(file_majors.begin(), file_majors.end());
    p.cuda_majors.assign(majors.begin(), majors.end());

    // Targets present, whatever the device.
    GpuCodeVerdict code =
        judge_gpu_code(f.gpu_code, target ? target->cc : gpu::ComputeCapability{});
    if (code.sass_targets.empty() && code.ptx_targets.empty()) continue;
    ++p.gpu_files;
    ++out.gpu_files;
    std::vector<std::string> sass;
    std::vector<std::string> ptx;
    for (GpuTarget t : code.sass_targets) sass.push_back(audit::sass_name(t));
    for (GpuTarget t : code.ptx_targets) ptx.push_back(audit::ptx_name(t));
    add_sorted_unique(p.sass_targets, sass);
    add_sorted_unique(p.ptx_targets, ptx);
    CodeRuns runs = CodeRuns::kNotJudged;
    if (target) {
      runs = code.run;
      if (code.nvfp4) p.nvfp4 = true;
      if (runs == CodeRuns::kDoesNotRun) p.gpu_files_not_running.push_back(f.file);
      if (code.containers_trapping > 0) {
        p.gpu_files_trapping.push_back(f.file);
        std::vector<std::string> guarded;
        for (GpuTarget t : code.trapping_targets) guarded.push_back(audit::sass_name(t));
        add_sorted_unique(p.trapping_targets, guarded);
      }
      fv.gpu = std::move(code);
    }
    if (p.gpu == CodeRuns::kNoGpuCode || runs_rank(runs) > runs_rank(p.gpu)) p.gpu = runs;
  }
  for (auto& [name, p] : packages) {
    RuleContext& c = contexts[name];
    c.target = target;
    c.torch_cuda_major = torch_major;
    c.torch_cuda = facts.torch_cuda;
    c.bnb_cuda_version = facts.bnb_cuda_version;
    c.guarded_imports = facts.guarded_imports;
    c.machine = facts.machine;
    p.notes = package_notes(p, c);
    out.packages.push_back(std::move(p));
  }
  return out;
}

}  // namespace sparkdoc::checks
