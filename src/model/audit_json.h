// JSON field lists of the audit readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/audit.h"

namespace sparkdoc::audit {
SPARKDOC_JSON(LibraryProblem, file, soname, cuda_major, resolved, cuda_library)
SPARKDOC_JSON(Note, severity, text, topic)
SPARKDOC_JSON(PackageAudit, name, key, version, files, gpu_files, cuda_majors, problems, gpu,
              gpu_files_not_running, nvfp4, sass_targets, ptx_targets, notes, errors)
SPARKDOC_JSON(NativeAudit, site_packages, target, target_source, torch_cuda, files, gpu_files,
              errors, elapsed_ms, packages)
}  // namespace sparkdoc::audit
