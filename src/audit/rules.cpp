#include "audit/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/names.h"
#include "core/paths.h"
#include "core/strings.h"
#include "pyenv/dist_info.h"
#include "pyenv/torch.h"

namespace sparkdoc::audit {
namespace {

Note note(std::string severity, std::string text) {
  return Note{std::move(severity), std::move(text), {}};
}

bool any_file(const RuleContext& c, std::string_view prefix) {
  return std::any_of(c.files.begin(), c.files.end(),
                     [&](const std::string& f) { return file_name(f).starts_with(prefix); });
}

std::string target_text(const RuleContext& c) {
  return c.target ? fmt::format("{}.{}", c.target->major, c.target->minor) : "";
}

std::string arch_list_hint(const RuleContext& c) {
  if (!c.target) return "";
  return fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\"", target_text(c));
}

std::string targets_text(const PackageAudit& p) {
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

void library_notes(const PackageAudit& p, const RuleContext& c, std::vector<Note>& out) {
  const bool nvidia_wheel = pep503_name(p.name).starts_with("nvidia-");
  // Group by soname so a package with fifty extensions gets one line per library.
  std::map<std::string, std::vector<const LibraryProblem*>> by_soname;
  for (const LibraryProblem& problem : p.problems) by_soname[problem.soname].push_back(&problem);
  for (const auto& [soname, problems] : by_soname) {
    const LibraryProblem& first = *problems.front();
    std::vector<std::string> files;
    for (const auto* problem : problems) files.push_back(problem->file);
    std::string who = files_text(files);
    const bool cuda = pyenv::is_cuda_soname(soname);
    if (!first.resolved) {
      std::string major;
      if (first.cuda_major && c.torch_cuda_major && *first.cuda_major != *c.torch_cuda_major) {
        major = fmt::format(" (a CUDA {} library; torch here is CUDA {}: install the package's "
                            "build for CUDA {})",
                            *first.cuda_major, c.torch_cuda, *c.torch_cuda_major);
      }
      out.push_back(note(cuda && !nvidia_wheel ? "fail" : "warn",
                         fmt::format("{} needs {}, which the loader will not find{}: importing "
                                     "it fails with \"{}: cannot open shared object file\"",
                                     who, soname, major, soname)));
    } else if (first.cuda_major && c.torch_cuda_major &&
               *first.cuda_major != *c.torch_cuda_major) {
      if (nvidia_wheel) {
        out.push_back(note("warn", fmt::format("{} is a CUDA {} library beside a CUDA {} torch: "
                                               "a leftover wheel; pip uninstall {}",
                                               who, *first.cuda_major, c.torch_cuda, p.name)));
      } else {
        out.push_back(note("fail", fmt::format("{} needs {} (CUDA {}) but torch is CUDA {}: two "
                                               "CUDA runtimes in one process; install the "
                                               "package's build for CUDA {}",
                                               who, soname, *first.cuda_major, c.torch_cuda,
                                               *c.torch_cuda_major)));
      }
    }
  }
}

void gpu_notes(const PackageAudit& p, const RuleContext& c, std::vector<Note>& out) {
  if (!c.target || p.gpu_files == 0) return;
  const std::string target = target_text(c);
  // NVIDIA's own libraries load kernels that .nv_fatbin does not hold: cuFFT keeps its
  // per-architecture kernels in .ldata (libcufft.so.12 of CUDA 13 lists only sm_75 there and
  // runs on every GPU CUDA 13 supports). What their .nv_fatbin lacks is no verdict.
  if (pep503_name(p.name).starts_with("nvidia-")) {
    if (p.gpu == "does_not_run" || p.gpu == "ptx_jit_only") {
      out.push_back(note("info", fmt::format("its .nv_fatbin has no SASS for {} ({}); NVIDIA's "
                                             "libraries load further kernels from elsewhere "
                                             "(cuFFT from .ldata), so this is not judged",
                                             target, targets_text(p))));
    }
    return;
  }
  if (p.gpu == "does_not_run") {
    out.push_back(note(
        "fail", fmt::format("no GPU code for {} in {} (built for {}): kernel launches fail with "
                            "\"no kernel image is available for execution on the device\"; "
                            "rebuild with {}",
                            target, files_text(p.gpu_files_not_running), targets_text(p),
                            arch_list_hint(c))));
  } else if (p.gpu == "ptx_jit_only") {
    out.push_back(note("warn", fmt::format("no SASS for {} ({}): the driver JIT-compiles PTX on "
                                           "first use (minutes; cached in ~/.nv/ComputeCache)",
                                           target, targets_text(p))));
  }
}

// Sets the topic of the notes from `first` on.
void tag(std::vector<Note>& notes, size_t first, std::string_view topic) {
  for (size_t i = first; i < notes.size(); ++i) notes[i].topic = std::string(topic);
}

}  // namespace

std::vector<Note> package_notes(const PackageAudit& p, const RuleContext& c) {
  std::vector<Note> out;
  library_notes(p, c, out);
  tag(out, 0, "libraries");
  size_t first = out.size();
  gpu_notes(p, c, out);
  tag(out, first, "gpu_code");
  first = out.size();
  const std::string key = pep503_name(p.name);
  const bool blackwell12 = c.target && c.target->major == 12;

  if (key == "flash-attn" && !any_file(c, "flash_attn_2_cuda") && !any_file(c, "flash_attn_3") &&
      !any_file(c, "_flash_attn")) {
    out.push_back(note("fail", "flash-attn is installed without its CUDA extension "
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
      out.push_back(note(
          "fail", fmt::format("no libbitsandbytes_cuda{}.so for CUDA {}{} (has: {}): "
                              "bitsandbytes cannot load its GPU library; install a build for "
                              "this CUDA or build it with -DCOMPUTE_CAPABILITY including {}",
                              want, c.bnb_cuda_version.empty() ? c.torch_cuda : want,
                              c.bnb_cuda_version.empty() ? "" : " (BNB_CUDA_VERSION)",
                              have.empty() ? "none" : join(have, ", "),
                              c.target ? std::to_string(c.target->sm()) : "the GPU's")));
    }
  }
  if (key == "mamba-ssm" && !any_file(c, "selective_scan_cuda")) {
    out.push_back(note(
        "warn", "mamba-ssm was built without selective_scan_cuda (a build that sees no GPU "
                "skips it silently): `import selective_scan_cuda` fails unless "
                "mamba_ssm/ops/selective_scan_interface.py wraps it in try/except; Mamba-2 "
                "models (Nemotron-H) use Triton kernels and do not need it"));
  }
  if (key == "causal-conv1d" && !any_file(c, "causal_conv1d_cuda")) {
    out.push_back(note("fail", "causal-conv1d is installed without its CUDA extension "
                               "(no causal_conv1d_cuda*.so): rebuild with "
                               "CAUSAL_CONV1D_FORCE_BUILD=TRUE and a TORCH_CUDA_ARCH_LIST "
                               "that includes 12.0;12.1+PTX"));
  }
  tag(out, first, "package");
  first = out.size();
  if (blackwell12 && p.gpu_files > 0 && !p.nvfp4 && p.gpu != "does_not_run" &&
      (key == "torch" || key == "vllm" || key == "flash-attn" || key == "xformers" ||
       key == "transformer-engine" || key == "bitsandbytes")) {
    out.push_back(note(
        "info", fmt::format("no sm_{0}a / sm_{1}f code that runs on {2}: NVFP4 block-scaled "
                            "kernels are not in this build (G7); source builds need "
                            "TORCH_CUDA_ARCH_LIST=\"{2}a\"",
                            c.target->sm(), c.target->major * 10, target_text(c))));
  }
  tag(out, first, "nvfp4");
  return out;
}

std::string worst_severity(const std::vector<Note>& notes) {
  std::string worst;
  auto rank = [](const std::string& s) { return s == "fail" ? 3 : s == "warn" ? 2 : s == "info" ? 1 : 0; };
  for (const Note& n : notes) {
    if (rank(n.severity) > rank(worst)) worst = n.severity;
  }
  return worst;
}

}  // namespace sparkdoc::audit
