#include "audit/audit.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <span>
#include <thread>

#include "audit/rules.h"
#include "audit/scan.h"
#include "core/cuda_sonames.h"
#include "core/names.h"
#include "core/paths.h"
#include "elf/compat.h"
#include "elf/dynamic.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "pyenv/torch.h"

namespace sparkdoc::audit {
namespace {

// The libraries torch/__init__.py preloads (2.11, _preload_cuda_deps), by the name before
// ".so"; each is taken from nvidia/cu<major>/lib first, then from any other nvidia/*/lib.
constexpr std::string_view kTorchPreload[] = {
    "libcublasLt", "libcublas", "libcudnn",    "libnvrtc",   "libnvrtc-builtins", "libcudart",
    "libcupti",    "libcufft",  "libcurand",   "libnvJitLink", "libcusparse",     "libcusparseLt",
    "libcusolver", "libnccl",   "libnvshmem_host", "libcufile"};

// The C library and its companions are in every Python process before any extension.
constexpr std::string_view kProcessLibraries[] = {
    "libc.so.6",       "libm.so.6",  "libpthread.so.0",         "libdl.so.2",
    "librt.so.1",      "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"};

// Libraries of the driver: whether they exist is the driver's question (G1, G9), not a
// package's.
bool is_driver_library(std::string_view soname) {
  return soname == "libcuda.so.1" || soname == "libnvidia-ml.so.1";
}

// What `import torch` has loaded before any extension module: torch/lib's libraries and the
// preloaded CUDA libraries. Empty when torch is not in this folder.
std::map<std::string, std::string> torch_loaded(const Root& root, const SitePackages& site,
                                                std::optional<int> cuda_major) {
  std::map<std::string, std::string> loaded;
  for (std::string_view lib : kProcessLibraries) loaded.emplace(lib, "(the Python process)");
  const std::string torch_lib = join_path(site.dir, "torch/lib");
  if (!exists(root.path(join_path(site.dir, "torch/__init__.py")))) return loaded;
  for (const std::string& f : site.files) {
    if (f.starts_with("torch/lib/") && f.find('/', 10) == std::string::npos) {
      loaded.emplace(std::string(file_name(f)), join_path(site.dir, f));
    }
  }
  std::string first_dir = cuda_major ? fmt::format("nvidia/cu{}/lib/", *cuda_major) : "";
  for (std::string_view lib : kTorchPreload) {
    const std::string prefix = std::string(lib) + ".so.";
    const std::string* chosen = nullptr;
    for (const std::string& f : site.files) {
      if (!f.starts_with("nvidia/") || !file_name(f).starts_with(prefix)) continue;
      size_t lib_dir = f.rfind("/lib/");
      if (lib_dir == std::string::npos || f.find('/', lib_dir + 5) != std::string::npos) continue;
      if (!first_dir.empty() && f.starts_with(first_dir)) {
        chosen = &f;
        break;
      }
      if (chosen == nullptr) chosen = &f;
    }
    if (chosen != nullptr) loaded.emplace(std::string(file_name(*chosen)), join_path(site.dir, *chosen));
  }
  return loaded;
}

FileAudit audit_file(const AuditOptions& options, const elf::LoaderModel& loader,
                     const SitePackages& site, const std::string& relative) {
  FileAudit out;
  out.file = relative;
  out.package = owner_of(site, relative);
  const std::string machine_path = join_path(site.dir, relative);
  const std::string path = options.root.path(machine_path);
  auto dynamic = elf::read_dynamic(path);
  if (!dynamic) {
    out.error = dynamic.error().message;
    return out;
  }
  std::set<int> majors;
  for (const std::string& soname : dynamic->needed) {
    if (is_driver_library(soname)) continue;
    elf::Resolution r = loader.find(machine_path, *dynamic, soname);
    if (auto major = cuda_major_of_soname(soname)) majors.insert(*major);
    out.needs.push_back(std::move(r));
  }
  out.cuda_majors.assign(majors.begin(), majors.end());
  // Judged container by container as the file is read: a large library's entries are never
  // all in memory at once. Without a target the builder's run verdicts go unused.
  elf::VerdictBuilder builder(options.target.value_or(elf::ComputeCapability{}));
  auto kind = elf::scan_gpu_code(
      path, [&](const elf::FatbinContainer* container,
                std::span<const elf::FatbinEntry> entries) { builder.add(container, entries); });
  if (!kind) {
    out.error = kind.error().message;
    return out;
  }
  elf::GpuCodeVerdict verdict = builder.verdict(builder.listed_section(*kind));
  for (elf::GpuTarget t : verdict.sass_targets) out.sass_targets.push_back(elf::sass_name(t));
  for (elf::GpuTarget t : verdict.ptx_targets) out.ptx_targets.push_back(elf::ptx_name(t));
  std::sort(out.sass_targets.begin(), out.sass_targets.end());
  std::sort(out.ptx_targets.begin(), out.ptx_targets.end());
  out.gpu_code = !out.sass_targets.empty() || !out.ptx_targets.empty();
  if (out.gpu_code && options.target) out.verdict = std::move(verdict);
  return out;
}

int verdict_rank(std::string_view gpu) {
  if (gpu == "does_not_run") return 3;
  if (gpu == "ptx_jit_only") return 2;
  if (gpu == "sass") return 1;
  return 0;
}

void add_sorted_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
  std::sort(to.begin(), to.end());
  to.erase(std::unique(to.begin(), to.end()), to.end());
}

}  // namespace

std::optional<int> cuda_major_of_version(std::string_view version) {
  int major = 0;
  size_t i = 0;
  while (i < version.size() && i < 3 && version[i] >= '0' && version[i] <= '9') {
    major = major * 10 + (version[i] - '0');
    ++i;
  }
  if (i == 0 || (i < version.size() && version[i] != '.')) return std::nullopt;
  return major;
}

AuditResult run_audit(const AuditOptions& options) {
  auto start = std::chrono::steady_clock::now();
  AuditResult result;
  NativeAudit& summary = result.summary;
  summary.site_packages = options.site_packages;
  summary.torch_cuda = options.torch_cuda;
  if (options.target) {
    summary.target = fmt::format("{}.{}", options.target->major, options.target->minor);
    summary.target_source = options.target_source;
  }
  auto site = index_site_packages(options.root, options.site_packages);
  if (!site) {
    summary.errors = 1;
    PackageAudit none;
    none.name = "(site-packages)";
    none.errors.push_back(site.error().message);
    summary.packages.push_back(std::move(none));
    return result;
  }
  const std::optional<int> torch_major = cuda_major_of_version(options.torch_cuda);

  elf::LoaderOptions loader_options;
  loader_options.root = options.root;
  loader_options.ld_library_path = options.ld_library_path;
  loader_options.ld_cache = options.ld_cache;
  loader_options.loaded = torch_loaded(options.root, *site, torch_major);
  const elf::LoaderModel loader(std::move(loader_options));

  // Files are independent: a shared index hands them to the workers in order.
  result.files.resize(site->files.size());
  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(site->files.size(), 1)));
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto work = [&] {
    for (size_t i = next++; i < site->files.size(); i = next++) {
      result.files[i] = audit_file(options, loader, *site, site->files[i]);
      size_t finished = ++done;
      if (options.progress) options.progress(finished, site->files.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  std::map<std::string, PackageAudit> packages;
  std::map<std::string, RuleContext> contexts;
  for (const FileAudit& f : result.files) {
    PackageAudit& p = packages[f.package];
    if (p.name.empty()) {
      p.name = f.package;
      p.key = pep503_name(f.package);
      if (auto it = site->distributions.find(f.package); it != site->distributions.end()) {
        p.version = it->second.version;
      }
    }
    contexts[f.package].files.push_back(f.file);
    ++p.files;
    ++summary.files;
    if (!f.error.empty()) {
      p.errors.push_back(f.error);
      ++summary.errors;
      continue;
    }
    std::vector<int> majors = p.cuda_majors;
    majors.insert(majors.end(), f.cuda_majors.begin(), f.cuda_majors.end());
    std::sort(majors.begin(), majors.end());
    majors.erase(std::unique(majors.begin(), majors.end()), majors.end());
    p.cuda_majors = std::move(majors);
    for (const elf::Resolution& r : f.needs) {
      std::optional<int> major = cuda_major_of_soname(r.soname);
      bool mismatch = major && torch_major && *major != *torch_major;
      if (r.path && !mismatch) continue;
      p.problems.push_back(LibraryProblem{f.file, r.soname, major, r.path.has_value(),
                                          pyenv::is_cuda_soname(r.soname)});
    }
    if (!f.gpu_code) continue;
    ++p.gpu_files;
    ++summary.gpu_files;
    add_sorted_unique(p.sass_targets, f.sass_targets);
    add_sorted_unique(p.ptx_targets, f.ptx_targets);
    std::string gpu = f.verdict ? std::string(elf::verdict_name(f.verdict->run)) : "not_judged";
    if (f.verdict && f.verdict->run == elf::RunVerdict::kDoesNotRun) {
      p.gpu_files_not_running.push_back(f.file);
    }
    if (f.verdict && f.verdict->nvfp4) p.nvfp4 = true;
    if (p.gpu == "no_gpu_code" || verdict_rank(gpu) > verdict_rank(p.gpu)) p.gpu = gpu;
  }
  for (auto& [name, p] : packages) {
    RuleContext& c = contexts[name];
    c.target = options.target;
    c.torch_cuda_major = torch_major;
    c.torch_cuda = options.torch_cuda;
    c.bnb_cuda_version = options.bnb_cuda_version;
    p.notes = package_notes(p, c);
    summary.packages.push_back(std::move(p));
  }
  summary.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace sparkdoc::audit
