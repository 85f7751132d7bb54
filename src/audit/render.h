// The audit as text: a header, one line per package worth a look (FAIL, WARN, INFO, or with
// GPU code; every package with `all`), its notes indented below, and a closing count.
#pragma once

#include <string>

#include "model/audit.h"

namespace sparkdoc::audit {

struct RenderOptions {
  bool all = false;  // every package with native code, not only those worth a look
};

std::string render_text(const NativeAudit& audit, const RenderOptions& options = {});

// 1 when any package has a "fail" note, else 0: the exit status of `sparkdoc audit`.
int audit_exit_status(const NativeAudit& audit);

}  // namespace sparkdoc::audit
