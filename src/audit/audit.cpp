#include "audit/audit.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <span>
#include <thread>

#include "audit/scan.h"
#include "core/cuda_sonames.h"
#include "core/paths.h"
#include "elf/dynamic.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "elf/mapped_read.h"
#include "elf/targets.h"

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

// What tells two versions of a file apart without reading it (GNU tar compares a file's ctime
// and size before and after reading it to warn "file changed as we read it"). Timestamps have
// the kernel's clock tick as their grain, so a truncation and a rewrite to the same size within
// one tick look the same: the guarded reads (elf/mapped_read.h) catch those that touched a
// vanished page or met an early end.
struct Stamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const Stamp&) const = default;
};

std::optional<Stamp> stamp_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  auto ns = [](const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return Stamp{st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
}

NativeFile read_file(const elf::LoaderModel& loader, const SitePackages& site,
                     const std::string& relative, const std::string& path) {
  NativeFile out;
  out.file = relative;
  out.package = owner_of(site, relative);
  const std::string machine_path = join_path(site.dir, relative);
  // A file that is no ELF at all gets read_dynamic's error below.
  const auto machine = elf::read_elf_machine(path);
  if (machine) out.machine = elf::machine_name(*machine);
  const elf::ElfMachine& own = loader.options().machine;
  const bool foreign = machine && own.elf_class != 0 && *machine != own;
  auto dynamic = elf::read_dynamic(path);
  if (!dynamic) {
    out.error = dynamic.error().message;
    return out;
  }
  // This machine's loader would not load it, so where its needs would resolve is no fact of
  // this machine; its GPU code is still recorded (it does not depend on the host).
  for (const std::string& soname : foreign ? std::vector<std::string>{} : dynamic->needed) {
    if (is_driver_library(soname)) continue;
    elf::Resolution r = loader.find(machine_path, *dynamic, soname);
    out.needs.push_back(LibraryNeed{std::move(r.soname), std::move(r.path),
                                    std::string(elf::found_via_name(r.via))});
  }
  // Grouped container by container as the file is read: a large library's entries are never
  // all in memory at once.
  elf::CodeFactsBuilder builder;
  auto kind = elf::scan_gpu_code(
      path, [&](const elf::FatbinContainer* container,
                std::span<const elf::FatbinEntry> entries) { builder.add(container, entries); });
  if (!kind) {
    out.error = kind.error().message;
    out.needs.clear();
    return out;
  }
  out.gpu_code = builder.groups(builder.listed_section(*kind));
  return out;
}

// One file, read as it was, or reported as changed during the read: an install beside the audit
// truncates a file and writes it again in place (cp, an in-place build), or unlinks it and
// writes a new one under its name (pip), and what was read of it then mixes versions (or
// zeros, where a mapped page vanished) and is thrown away.
NativeFile audit_file(const AuditOptions& options, const elf::LoaderModel& loader,
                      const SitePackages& site, const std::string& relative) {
  const std::string path = options.root.path(join_path(site.dir, relative));
  const std::optional<Stamp> before = stamp_of(path);
  const elf::ChangeWatch watch;
  NativeFile out = read_file(loader, site, relative, path);
  // A file absent before and there after (pip unlinks, then writes) changed too.
  if (watch.changed() || stamp_of(path) != before) {
    out.error = elf::changed_while_read(path) + "; run the audit again once installs have finished";
    out.needs.clear();
    out.gpu_code.clear();
    out.changed_during_read = true;
  }
  return out;
}

}  // namespace

NativeAudit run_audit(const AuditOptions& options) {
  auto start = std::chrono::steady_clock::now();
  NativeAudit out;
  out.site_packages = options.site_packages;
  out.torch_cuda = options.torch_cuda;
  out.bnb_cuda_version = options.bnb_cuda_version;
  out.machine = std::string(options.architecture.name);
  auto site = index_site_packages(options.root, options.site_packages);
  if (!site) {
    out.error = site.error().message;
    return out;
  }
  const std::optional<int> torch_major = cuda_major_of_version(options.torch_cuda);

  elf::LibrarySearch search;
  search.root = options.root;
  search.ld_library_path = options.ld_library_path;
  search.ld_cache = options.ld_cache;
  search.ld_cache_flags = options.architecture.ld_cache_flags;
  search.machine = options.architecture.machine;
  search.default_dirs = elf::default_directories(options.architecture.multiarch);
  search.loaded = torch_loaded(options.root, *site, torch_major);
  const elf::LoaderModel loader(std::move(search));

  // Files are independent: a shared index hands them to the workers in order.
  out.files.resize(site->files.size());
  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  threads =
      static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(site->files.size(), 1)));
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto work = [&] {
    for (size_t i = next++; i < site->files.size(); i = next++) {
      out.files[i] = audit_file(options, loader, *site, site->files[i]);
      size_t finished = ++done;
      if (options.progress) options.progress(finished, site->files.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  for (const NativeFile& f : out.files) {
    if (out.versions.contains(f.package)) continue;
    auto it = site->distributions.find(f.package);
    out.versions[f.package] = it == site->distributions.end() ? "" : it->second.version;
  }
  // Extensions whose absence a package's own Python tolerates once patched (000 §4).
  struct Guardable {
    std::string_view file;
    std::string_view module;
  };
  constexpr Guardable kGuardable[] = {
      {"mamba_ssm/ops/selective_scan_interface.py", "selective_scan_cuda"}};
  for (const Guardable& g : kGuardable) {
    auto text = read_text(options.root.path(site->dir + "/" + std::string(g.file)), 4u << 20);
    if (text && import_is_guarded(*text, g.module)) out.guarded_imports.emplace_back(g.module);
  }
  out.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sparkdoc::audit
