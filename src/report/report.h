// Renders check findings. Reports only speak: they never read the machine, and their output
// is a function of the findings and the snapshot's own metadata (time from the snapshot),
// so golden files compare byte for byte.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "checks/registry.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::report {

// The env report's verdict vocabulary: "ready", "ready-with-warnings", "blocked".
enum class Readiness { kReady, kReadyWithWarnings, kBlocked };
std::string_view readiness_key(Readiness r);

struct CheckReport {
  std::string sparkdoc_version;
  std::string taken_at;
  std::string hostname;
  std::string source;                     // "live" or the snapshot file name
  facts::Platform platform;
  std::optional<facts::Headroom> headroom;
  std::vector<checks::Finding> findings;
};

// Gathers everything a report needs; pure.
CheckReport make_report(const Snapshot& snapshot, const Workload& workload,
                        const std::vector<std::string>& only, std::string source);

// Why the verdict is what it is, for the verdict line and JSON's "verdict_reason": the checks that
// block or warn, that nothing did when only SKIPs make it ready-with-warnings, and that no GPU
// was read at all; "" for a plain ready.
std::string verdict_reason(const CheckReport& report, bool strict);

// blocked on any FAIL (and, with strict, any WARN); ready-with-warnings on any WARN or SKIP.
Readiness readiness(const std::vector<checks::Finding>& findings, bool strict);

struct TextOptions {
  bool color = false;   // ANSI colour on the verdict word; the CLI sets it only on a TTY
  bool strict = false;
};

// "WARN", in the verdict's colour when `color` (ANSI; check and lint colour alike).
std::string colored_verdict(checks::Verdict v, bool color);

// Header lines, one line per finding ("G3 WARN: ..."), a verdict line.
std::string render_text(const CheckReport& report, const TextOptions& options);
// Everything in the report, for machines (`--json`).
nlohmann::json render_json(const CheckReport& report, bool strict);
// The env report shape the documents' tooling reads: platform, checks (pass | fail |
// warn: <detail> | skip: <reason> | info: <reading>), headroom_gb, verdict; more under other keys.
nlohmann::json render_env_report(const CheckReport& report, bool strict);

// `sparkdoc check --list` and the docs page: the table of checks.
std::string render_check_list();
// `sparkdoc explain ID`: symptom, cause, how it is checked, fix, source.
std::string render_explanation(const checks::CheckInfo& info);
// docs/CHECKS.md: every check's explanation as Markdown (`sparkdoc explain --markdown`).
std::string render_checks_markdown();
// The same for machines: one check's catalogue row ({"id", "title", "symptom", "cause",
// "how_checked", "fix", "reads", "source", "kind": "check" | "lint"}), and the list of checks
// (`sparkdoc check --list --json`, `sparkdoc explain --json` with no words).
nlohmann::json render_explanation_json(const checks::CheckInfo& info);
nlohmann::json render_check_list_json();

}  // namespace sparkdoc::report

namespace sparkdoc::report {}  // namespace sparkdoc::report
