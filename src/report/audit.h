// `sparkdoc audit` as text and as JSON, from the checks' judgement of the audit's facts.
// Text: a header, one line per package worth a look (FAIL, WARN, INFO, or with GPU code; every
// package with `all`), its notes indented below, and a closing count. JSON: {"audit": the
// summary per package, "files": every file's needs and GPU code}; keys are public, append only.
// A file that changed while it was read (an install beside the audit) is unreadable with its
// reason, counted in the header ("N changed while being read") and in "changed_during_read" of
// the summary, and marked "changed_during_read": true among the files.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "checks/native_code.h"
#include "model/native.h"

namespace sparkdoc::report {

struct AuditTextOptions {
  bool all = false;  // every package with native code, not only those worth a look
};

std::string render_audit_text(const audit::NativeAudit& facts, const checks::NativeVerdict& verdict,
                              const AuditTextOptions& options = {});

nlohmann::json render_audit_json(const audit::NativeAudit& facts,
                                 const checks::NativeVerdict& verdict);

// The package x GPU matrix (`sparkdoc audit --matrix`, and the HTML page): a row per package
// with GPU code, a column per GPU generation (8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 12.0, 12.1, and
// the target's when it is none of them), each cell how the package's code runs on such a GPU
// as judge_native judges it for that target: SASS (runs as built), PTX (JIT-compiled at the
// first load) or none; the judged target's column marked. "" when no package has GPU code.
std::string render_audit_matrix_text(const audit::NativeAudit& facts,
                                     const checks::NativeVerdict& verdict);

// The audit as a self-contained HTML page (report/picture.h): the header, the matrix, every
// package worth a look with its notes.
std::string render_audit_html(const audit::NativeAudit& facts,
                              const checks::NativeVerdict& verdict);

// 1 when any package has a FAIL note, else 0: the exit status of `sparkdoc audit`.
int audit_exit_status(const checks::NativeVerdict& verdict);

}  // namespace sparkdoc::report
