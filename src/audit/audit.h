// The native-code audit of one site-packages folder: for every shared object, the libraries
// it needs and where the loader would find them (elf/loader.h), the CUDA major those imply,
// and whether its GPU code runs on the target compute capability (elf/compat.h); then per
// distribution, with the rules for packages the seeds name (audit/rules.h).
//
// Reads only headers: the dynamic section and the fatbin headers of each file, mapped (a
// few pages each), over a pool of threads. Never fails as a whole: a file that cannot be read
// is an error of its own and the audit goes on.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "elf/compat.h"
#include "elf/ld_cache.h"
#include "elf/loader.h"
#include "model/audit.h"

namespace sparkdoc::audit {

struct AuditOptions {
  Root root;
  std::string site_packages;  // machine path
  std::optional<elf::ComputeCapability> target;  // none: GPU code is listed, not judged
  std::string target_source;                     // "NVIDIA GB10", "--arch"
  std::string torch_cuda;                        // torch.version.cuda ("13.0"); "" unknown
  std::string ld_library_path;
  std::vector<elf::LdCacheEntry> ld_cache;
  std::string bnb_cuda_version;  // $BNB_CUDA_VERSION
  unsigned threads = 0;          // 0: one per online CPU, at most 32
  // Called from worker threads as files finish (done, total); may be empty.
  std::function<void(size_t, size_t)> progress;
};

struct FileAudit {
  std::string file;     // relative to the site-packages folder
  std::string package;
  std::string error;    // set when the file could not be read; nothing else is then
  std::vector<elf::Resolution> needs;
  std::vector<int> cuda_majors;
  bool gpu_code = false;                       // any SASS or PTX entry
  std::optional<elf::GpuCodeVerdict> verdict;  // with a target
  std::vector<std::string> sass_targets;       // "sm_90a"
  std::vector<std::string> ptx_targets;        // "compute_90"
};

struct AuditResult {
  NativeAudit summary;
  std::vector<FileAudit> files;  // sorted by file
};

AuditResult run_audit(const AuditOptions& options);

// The CUDA major a torch.version.cuda string names ("13.0" -> 13); nullopt otherwise.
std::optional<int> cuda_major_of_version(std::string_view version);

}  // namespace sparkdoc::audit
