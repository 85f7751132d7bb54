// The native-code audit of one site-packages folder: for every shared object, the libraries
// it needs and where the loader would find them (elf/loader.h), and its GPU code as groups of
// containers by target (elf/targets.h), with the distribution owning it. Facts only: whether
// the code runs on a GPU, and what that means per package, the checks judge
// (checks/native_code.h).
//
// Reads only headers: the dynamic section and the fatbin headers of each file, mapped (a
// few pages each), over a pool of threads. Never fails as a whole: a file that cannot be read
// is an error of its own and the audit goes on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "elf/ld_cache.h"
#include "elf/loader.h"
#include "model/native.h"

namespace sparkdoc::audit {

struct AuditOptions {
  Root root;
  std::string site_packages;  // machine path
  std::string torch_cuda;     // torch.version.cuda ("13.0"); "" unknown
  std::string ld_library_path;
  std::vector<elf::LdCacheEntry> ld_cache;
  std::string bnb_cuda_version;  // $BNB_CUDA_VERSION
  unsigned threads = 0;          // 0: one per online CPU, at most 32
  // Called from worker threads as files finish (done, total); may be empty.
  std::function<void(size_t, size_t)> progress;
};

// Never fails as a whole: a folder that cannot be indexed is NativeAudit::error, a file that
// cannot be read its NativeFile::error.
NativeAudit run_audit(const AuditOptions& options);

}  // namespace sparkdoc::audit
