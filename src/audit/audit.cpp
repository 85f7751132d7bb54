#include "audit/audit.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <span>
#include <thread>

#include "audit/fact_cache.h"
#include "audit/scan.h"
#include "core/cuda_sonames.h"
#include "core/parallel.h"
#include "core/paths.h"
#include "core/version.h"
#include "elf/dynamic.h"
#include "elf/fatbin.h"
#include "elf/guards.h"
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

// Whether a file's sm_121 cubins are read for the sm120-only guard (elf/guards.h). Not those
// of NVIDIA's own wheels (site-packages/nvidia/): the guard is vLLM's CUTLASS extensions', and
// cuDNN 9's precompiled engines alone hold 192 sm_121 cubins, which took 0.4 s and 60 MB more
// to decompress on every audit without a cache.
bool reads_guards(std::string_view relative) {
  return !relative.starts_with("nvidia/");
}

// What the audit reads of the file at `path`: its bytes' facts, nothing about the machine.
// `guards`: whether to read the cubins the sm120-only guard could be in.
FileFacts read_facts(const std::string& path, bool guards) {
  FileFacts out;
  // A file that is no ELF at all gets read_dynamic's error below.
  if (auto machine = elf::read_elf_machine(path)) out.machine = *machine;
  auto dynamic = elf::read_dynamic(path);
  if (!dynamic) {
    out.error = dynamic.error().message;
    return out;
  }
  out.needed = std::move(dynamic->needed);
  out.rpath = std::move(dynamic->rpath);
  out.runpath = std::move(dynamic->runpath);
  // Grouped container by container as the file is read: a large library's entries are never
  // all in memory at once; the few cubins the guard could be in are read whole.
  elf::CodeFactsBuilder builder;
  elf::GuardScanner scanner(path);
  std::string guard_error;
  auto kind = elf::scan_gpu_code(
      path, [&](const elf::FatbinContainer* container, std::span<const elf::FatbinEntry> entries) {
        auto guarded = guards && guard_error.empty() ? scanner.sm120_only_targets(entries)
                                                     : Result<std::vector<GpuTarget>>{};
        if (!guarded) guard_error = guarded.error().message;
        builder.add(container, entries, guarded ? std::move(*guarded) : std::vector<GpuTarget>{});
      });
  if (!kind || !guard_error.empty()) {
    FileFacts failed;
    failed.machine = out.machine;
    failed.error = kind ? guard_error : kind.error().message;
    return failed;
  }
  out.gpu_code = builder.groups(builder.listed_section(*kind));
  return out;
}

// One file's facts as this audit takes them: from the cache when its stamp is the one they
// were read under, else read, or reported as changed during the read: an install beside the
// audit truncates a file and writes it again in place (cp, an in-place build), or unlinks it
// and writes a new one under its name (pip), and what was read of it then mixes versions (or
// zeros, where a mapped page vanished) and is thrown away.
struct Taken {
  FileFacts facts;
  std::optional<FileStamp> stamp;  // before the read
  bool changed = false;
  bool from_cache = false;
  bool cacheable = false;  // read now, and fit to keep (fact_cache.h says which are not)
};

// A file's facts taken from `cache` are moved out of it (each file is one thread's).
// With `verified`, every entry of `cache` was stamped just before and holds its stamp still
// (verify_listed): one there is taken without a stat of its own.
Taken take_file(const std::string& path, CachedFiles* cache, bool verified,
                const std::string& relative, int64_t settled_ns) {
  Taken out;
  if (cache != nullptr && verified) {
    if (auto it = cache->find(relative); it != cache->end()) {
      out.stamp = it->second.stamp;
      out.facts = std::move(it->second.facts);
      out.from_cache = true;
      return out;
    }
  }
  out.stamp = stamp_of(path);
  if (cache != nullptr && out.stamp) {
    if (auto it = cache->find(relative); it != cache->end() && it->second.stamp == *out.stamp) {
      out.facts = std::move(it->second.facts);
      out.from_cache = true;
      return out;
    }
  }
  const elf::ChangeWatch watch;
  out.facts = read_facts(path, reads_guards(relative));
  // A file absent before and there after (pip unlinks, then writes) changed too.
  out.changed = watch.changed() || stamp_of(path) != out.stamp;
  out.cacheable =
      !out.changed && out.facts.error.empty() && settled(out.stamp, out.stamp, settled_ns);
  return out;
}

// The file as the audit records it: its facts, and where this machine's loader finds its needs.
NativeFile resolve(const elf::LoaderModel& loader, const SitePackages& site,
                   const std::string& relative, const Taken& taken) {
  NativeFile out;
  out.file = relative;
  out.package = owner_of(site, relative);
  const FileFacts& facts = taken.facts;
  if (facts.machine) out.machine = elf::machine_name(*facts.machine);
  if (taken.changed) {
    out.error = elf::changed_while_read(loader.options().root.path(join_path(site.dir, relative))) +
                "; run the audit again once installs have finished";
    out.changed_during_read = true;
    return out;
  }
  if (!facts.error.empty()) {
    out.error = facts.error;
    return out;
  }
  const elf::ElfMachine& own = loader.options().machine;
  // This machine's loader would not load it, so where its needs would resolve is no fact of
  // this machine; its GPU code is still recorded (it does not depend on the host).
  const bool foreign = facts.machine && own.elf_class != 0 && *facts.machine != own;
  if (!foreign) {
    const std::string machine_path = join_path(site.dir, relative);
    elf::DynamicInfo dynamic;
    dynamic.rpath = facts.rpath;
    dynamic.runpath = facts.runpath;
    for (const std::string& soname : facts.needed) {
      if (is_driver_library(soname)) continue;
      elf::Resolution r = loader.find(machine_path, dynamic, soname);
      out.needs.push_back(LibraryNeed{std::move(r.soname), std::move(r.path),
                                      std::string(elf::found_via_name(r.via))});
    }
  }
  out.gpu_code = facts.gpu_code;
  return out;
}

int64_t realtime_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// What the cache keeps of the files after this audit: what it had of files unchanged, and what
// was read now that may be kept.
CachedFiles files_to_keep(const SitePackages& site, const std::vector<Taken>& taken) {
  CachedFiles kept;
  for (size_t i = 0; i < taken.size(); ++i) {
    const Taken& t = taken[i];
    if (t.from_cache || t.cacheable) kept.emplace(site.files[i], CachedFile{*t.stamp, t.facts});
  }
  return kept;
}

// Stamps every folder, RECORD and file the cache lists at once, and drops each entry whose
// stamp is no longer the one it was kept under: the index and the files' readers then take
// those left without a stat of their own (audit/scan.h, take_file), and read the others. After
// a reboot the walk's stats, one after another on one thread, would each wait on the disk;
// here they wait together. Returns how many entries were dropped.
size_t verify_listed(const std::string& dir, AuditCache& cache) {
  // Lookups wait on the disk, not on a CPU: more threads than cores keep more reads in flight.
  constexpr unsigned kLookupThreads = 16;
  IndexCache& index = cache.index;
  std::vector<std::string> paths;
  paths.reserve(index.folders.size() + index.records.size() + cache.files.size());
  for (const auto& [folder, listing] : index.folders) paths.push_back(join_path(dir, folder));
  for (const auto& [folder, listing] : index.records) {
    paths.push_back(join_path(dir, folder) + "/RECORD");
  }
  for (const auto& [file, facts] : cache.files) paths.push_back(join_path(dir, file));
  const std::vector<std::optional<FileStamp>> stamps = stamps_of(paths, kLookupThreads);
  size_t i = 0;
  size_t dropped = 0;
  auto keep_current = [&](auto& listings) {
    for (auto it = listings.begin(); it != listings.end(); ++i) {
      if (stamps[i] == it->second.stamp) {
        ++it;
      } else {
        it = listings.erase(it);
        ++dropped;
      }
    }
  };
  keep_current(index.folders);
  keep_current(index.records);
  keep_current(cache.files);
  return dropped;
}

}  // namespace

NativeAudit run_audit(const AuditOptions& options, AuditStats* out_stats) {
  auto start = std::chrono::steady_clock::now();
  AuditStats stats;
  auto phase_start = start;
  auto phase_done = [&](const char* name) {
    auto now = std::chrono::steady_clock::now();
    stats.phases_ms.emplace_back(
        name, std::chrono::duration<double, std::milli>(now - phase_start).count());
    phase_start = now;
  };
  NativeAudit out;
  out.site_packages = options.site_packages;
  out.torch_cuda = options.torch_cuda;
  out.bnb_cuda_version = options.bnb_cuda_version;
  out.machine = std::string(options.architecture.name);
  // The cache first: every folder and file whose stamp it holds is then not read at all.
  AuditCache cached;
  const FactCacheKey cache_key{options.root.path(options.site_packages),
                               std::string(options.architecture.name), kVersion};
  const bool use_cache = !options.cache_root.empty();
  if (use_cache) {
    if (auto loaded = load_fact_cache(options.cache_root, cache_key)) {
      cached = std::move(*loaded);
      stats.cache_loaded = true;
    } else {
      stats.cache_problem = loaded.error().message;
    }
  }
  if (use_cache) phase_done("cache_load");
  size_t entries_dropped = 0;
  if (stats.cache_loaded) {
    entries_dropped = verify_listed(options.root.path(options.site_packages), cached);
    phase_done("stamps");
  }
  const int64_t settled_ns = realtime_ns() - options.cache_settle_ns;
  AuditCache next;
  IndexCaching index_caching{&cached.index, &next.index, stats.cache_loaded, settled_ns};
  auto site = index_site_packages(options.root, options.site_packages,
                                  use_cache ? &index_caching : nullptr);
  stats.listings_read = index_caching.read;
  phase_done("index");
  // What was taken has left cached.index: what is left there was not taken.
  const bool index_changed = index_caching.kept_new || entries_dropped > 0 ||
                             !cached.index.folders.empty() || !cached.index.records.empty();
  cached.index = {};
  if (!site) {
    out.error = site.error().message;
    if (out_stats != nullptr) *out_stats = std::move(stats);
    return out;
  }
  const std::optional<int> torch_major = cuda_major_of_version(options.torch_cuda);

  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  // Files are independent: a shared index hands them to the workers in order. Their facts come
  // first, then where their needs resolve, which is the same work for a file read now and one
  // taken from the cache.
  std::vector<Taken> taken(site->files.size());
  std::atomic<size_t> done{0};
  parallel_for(site->files.size(), threads, [&](size_t i) {
    const std::string path = options.root.path(join_path(site->dir, site->files[i]));
    taken[i] = take_file(path, use_cache ? &cached.files : nullptr, stats.cache_loaded,
                         site->files[i], settled_ns);
    size_t finished = ++done;
    if (options.progress) options.progress(finished, site->files.size());
  });
  for (const Taken& t : taken) ++(t.from_cache ? stats.files_from_cache : stats.files_read);
  phase_done("files");
  if (use_cache) {
    bool files_changed = entries_dropped > 0 || stats.files_from_cache != cached.files.size();
    for (const Taken& t : taken) files_changed |= t.cacheable;
    // Written only when it changed: an audit of an unchanged folder writes nothing. One that
    // cannot be written (a read-only home, a full disk, another user's folder) costs the next
    // audit its speed, never its result.
    if (index_changed || files_changed) {
      next.files = files_to_keep(*site, taken);
      if (auto stored = store_fact_cache(options.cache_root, cache_key, next)) {
        stats.cache_written = true;
      } else {
        stats.cache_problem = stored.error().message;
      }
    }
  }
  // Dropped before the needs are resolved, where the audit's resident set peaks: the index's
  // listings alone are about a MB for a full CUDA stack.
  next = {};
  cached.files = {};
  if (use_cache) phase_done("cache_store");

  elf::LibrarySearch search;
  search.root = options.root;
  search.ld_library_path = options.ld_library_path;
  search.ld_cache = options.ld_cache;
  search.ld_cache_flags = options.architecture.ld_cache_flags;
  search.machine = options.architecture.machine;
  search.default_dirs = elf::default_directories(options.architecture.multiarch);
  search.loaded = torch_loaded(options.root, *site, torch_major);
  // The files just taken need no second read of their headers where a need resolves to one.
  for (size_t i = 0; i < taken.size(); ++i) {
    if (taken[i].facts.machine && !taken[i].changed) {
      search.known_machines.emplace(normalize_path(join_path(site->dir, site->files[i])),
                                    *taken[i].facts.machine);
    }
  }
  const elf::LoaderModel loader(std::move(search));

  out.files.resize(site->files.size());
  parallel_for(site->files.size(), threads,
               [&](size_t i) { out.files[i] = resolve(loader, *site, site->files[i], taken[i]); });
  taken.clear();
  taken.shrink_to_fit();
  phase_done("resolve");

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
  if (out_stats != nullptr) *out_stats = std::move(stats);
  return out;
}

}  // namespace sparkdoc::audit
