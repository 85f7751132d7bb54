// Live capture: runs every probe once and assembles the Snapshot. Probes that fail leave
// their readings missing with the reason; capture itself never fails.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "audit/audit.h"
#include "core/fs.h"
#include "model/snapshot.h"

namespace sparkdoc {

struct CaptureOptions {
  Root root;                     // "/" live; a fixture folder in tests
  std::string python;            // --python: an interpreter to inspect first
  std::string site_packages;     // --site-packages: a folder to inspect first
  std::string config_dir = ".";  // where to look for tensor-parallel settings; "" skips
  bool read_gpu = true;          // false: GPU readings absent ("not read: --no-gpu")
  // false: initialise the CUDA driver (cuInit, about 0.2 s and 20 MB resident on an H200) only
  // when NVML could not list the devices; the driver version is read either way.
  bool cuda_devices_always = true;
  char** envp = nullptr;  // nullptr: this process's environment
  // Audit the native code of the Python environment (audit/audit.h): a few tens of ms warm
  // for a full CUDA stack. false records native_code as absent "not audited".
  bool audit_native = true;
  // Called from the audit's reader threads with (files read, files to read); none: quiet.
  std::function<void(size_t, size_t)> audit_progress;
  // Keep the audit's facts of each file in sparkdoc's cache (core/cache_dir.h,
  // audit/fact_cache.h), so that a later audit reads only the files that changed. false
  // (--no-cache): every file is read, and the cache is neither read nor written.
  bool audit_cache = true;
};

Snapshot capture(const CaptureOptions& options);

// What to audit in a snapshot's machine: the site-packages folder holding torch in the first
// environment that has it (else the first folder of the first environment), torch's CUDA
// version, LD_LIBRARY_PATH, BNB_CUDA_VERSION and /etc/ld.so.cache, and sparkdoc's cache root
// unless options.audit_cache is false. nullopt with the reason when there is no environment to
// audit.
Result<audit::AuditOptions> native_audit_options(const Snapshot& snapshot,
                                                 const CaptureOptions& options);

}  // namespace sparkdoc
