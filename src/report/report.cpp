#include "report/report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "checks/unchecked.h"
#include "core/printable.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"

namespace sparkdoc::report {
namespace {

using checks::Verdict;

std::string_view color_of(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return color::kGreen;
    case Verdict::kFail:
      return color::kBoldRed;
    case Verdict::kWarn:
      return color::kYellow;
    case Verdict::kSkip:
      return color::kDim;
    case Verdict::kInfo:
      return color::kCyan;
  }
  return "";
}

}  // namespace

std::string colored_verdict(Verdict v, bool color) {
  std::string word(checks::verdict_word(v));
  return color ? fmt::format("{}{}{}", color_of(v), word, color::kReset) : word;
}

namespace {

struct Counts {
  int pass = 0, fail = 0, warn = 0, skip = 0, info = 0;
};

Counts count(const std::vector<checks::Finding>& findings) {
  Counts c;
  for (const auto& f : findings) {
    switch (f.verdict) {
      case Verdict::kPass: ++c.pass; break;
      case Verdict::kFail: ++c.fail; break;
      case Verdict::kWarn: ++c.warn; break;
      case Verdict::kSkip: ++c.skip; break;
      case Verdict::kInfo: ++c.info; break;
    }
  }
  return c;
}

// Headroom in whole decimal GB, rounded down: a budget is never rounded up.
std::optional<double> headroom_gb(const CheckReport& report) {
  if (!report.headroom) return std::nullopt;
  return std::floor(static_cast<double>(report.headroom->bytes) / 1e8) / 10.0;
}

}  // namespace

std::string_view readiness_key(Readiness r) {
  switch (r) {
    case Readiness::kReady: return "ready";
    case Readiness::kReadyWithWarnings: return "ready-with-warnings";
    case Readiness::kBlocked: return "blocked";
  }
  return "blocked";
}

CheckReport make_report(const Snapshot& snapshot, const Workload& workload,
                        const std::vector<std::string>& only, std::string source) {
  CheckReport r;
  r.sparkdoc_version = snapshot.sparkdoc_version;
  r.taken_at = snapshot.taken_at;
  r.hostname = snapshot.host.hostname.value_or("");
  r.source = std::move(source);
  r.platform = facts::classify_platform(snapshot);
  r.headroom = facts::compute_headroom(snapshot, r.platform);
  r.findings = checks::run_checks(snapshot, workload, only);
  return r;
}

Readiness readiness(const std::vector<checks::Finding>& findings, bool strict) {
  Counts c = count(findings);
  if (c.fail > 0 || (strict && c.warn > 0)) return Readiness::kBlocked;
  if (c.warn > 0 || c.skip > 0) return Readiness::kReadyWithWarnings;
  return Readiness::kReady;
}

std::string verdict_reason(const CheckReport& report, bool strict) {
  std::vector<std::string> failed, warned;
  unsigned skipped = 0;
  for (const auto& f : report.findings) {
    if (f.verdict == Verdict::kFail) failed.push_back(f.id);
    if (f.verdict == Verdict::kWarn) warned.push_back(f.id);
    if (f.verdict == Verdict::kSkip) ++skipped;
  }
  std::string reason;
  if (!failed.empty()) {
    reason = "blocked by " + join(failed, ", ");
    if (strict && !warned.empty()) reason += " and, with --strict, " + join(warned, ", ");
  } else if (strict && !warned.empty()) {
    reason = "blocked, with --strict, by " + join(warned, ", ");
  } else if (!warned.empty()) {
    reason = "read the warnings of " + join(warned, ", ");
  } else if (skipped > 0) {
    reason = fmt::format(
        "nothing failed or warned, but {} check{} could not judge (SKIP: each "
        "line says why)",
        skipped, skipped == 1 ? "" : "s");
  }
  if (report.platform.kind == facts::PlatformKind::kNoGpu) {
    if (!reason.empty()) reason += "; ";
    reason += "no NVIDIA GPU was read, so nothing was judged for one";
  }
  return reason;
}

std::string render_text(const CheckReport& report, const TextOptions& options) {
  std::string out;
  out += fmt::format("sparkdoc {} check: {} ({})\n", report.sparkdoc_version,
                     report.platform.key, report.platform.description);
  std::string where = report.hostname.empty() ? std::string("unknown host") : report.hostname;
  // The host name, the file and the findings quote what the snapshot holds: a line of the
  // report each, whatever newline or escape sequence those strings carry (core/printable.h).
  out += fmt::format("snapshot: {}, {}, {}\n", printable(where),
                     report.taken_at.empty() ? "time unknown" : printable(report.taken_at),
                     printable(report.source));
  for (const auto& f : report.findings) {
    out += fmt::format("{} {}: {}\n", f.id, colored_verdict(f.verdict, options.color),
                       printable(f.detail));
  }
  Counts c = count(report.findings);
  std::string reason = verdict_reason(report, options.strict);
  out += fmt::format("verdict: {} ({} passed, {} failed, {} warnings, {} skipped, {} info){}\n",
                     readiness_key(readiness(report.findings, options.strict)), c.pass, c.fail,
                     c.warn, c.skip, c.info, reason.empty() ? "" : ": " + printable(reason));
  return out;
}

nlohmann::json render_json(const CheckReport& report, bool strict) {
  nlohmann::json j;
  j["sparkdoc_version"] = report.sparkdoc_version;
  j["taken_at"] = report.taken_at;
  j["hostname"] = report.hostname;
  j["source"] = report.source;
  j["platform"] = {{"key", report.platform.key},
                   {"description", report.platform.description},
                   {"evidence", report.platform.evidence},
                   {"gpu_name", report.platform.gpu_name}};
  if (report.platform.compute_capability) {
    j["platform"]["compute_capability"] = fmt::format(
        "{}.{}", report.platform.compute_capability->major, report.platform.compute_capability->minor);
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) {
    findings.push_back({{"id", f.id},
                        {"verdict", checks::verdict_key(f.verdict)},
                        {"detail", f.detail},
                        {"details", f.details}});
  }
  j["findings"] = std::move(findings);
  if (auto gb = headroom_gb(report)) {
    j["headroom_gb"] = *gb;
    j["headroom"] = {{"bytes", report.headroom->bytes},
                     {"available_bytes", report.headroom->available_bytes},
                     {"floor_bytes", report.headroom->floor_bytes},
                     {"page_cache_bytes", report.headroom->page_cache_bytes},
                     {"reclaimable_cache_bytes", report.headroom->reclaimable_cache_bytes},
                     {"rule", report.headroom->rule}};
  } else {
    j["headroom_gb"] = nullptr;
  }
  j["verdict"] = readiness_key(readiness(report.findings, strict));
  j["verdict_reason"] = verdict_reason(report, strict);
  return j;
}

nlohmann::json render_env_report(const CheckReport& report, bool strict) {
  nlohmann::json j;
  j["platform"] = report.platform.key;
  nlohmann::json checks = nlohmann::json::object();
  nlohmann::json details = nlohmann::json::object();
  for (const auto& f : report.findings) {
    std::string key(checks::verdict_key(f.verdict));
    // The documents' tooling writes bare "pass"/"fail" and "<word>: <text>" for the rest.
    if (f.verdict == Verdict::kPass || f.verdict == Verdict::kFail) {
      checks[f.id] = key;
    } else {
      checks[f.id] = fmt::format("{}: {}", key, f.detail);
    }
    details[f.id] = f.detail;
  }
  j["checks"] = std::move(checks);
  j["details"] = std::move(details);
  if (auto gb = headroom_gb(report)) j["headroom_gb"] = *gb; else j["headroom_gb"] = nullptr;
  j["verdict"] = readiness_key(readiness(report.findings, strict));
  j["sparkdoc_version"] = report.sparkdoc_version;
  j["taken_at"] = report.taken_at;
  j["hostname"] = report.hostname;
  return j;
}

std::string render_check_list() {
  std::string out;
  for (const auto& c : checks::all_checks()) {
    out += fmt::format("{:<4} {}  [{}]\n", c.id, c.title, c.source);
  }
  return out;
}

std::string render_explanation(const checks::CheckInfo& info) {
  constexpr size_t kWidth = 88;
  constexpr size_t kIndent = 10;
  auto field = [&](std::string_view label, std::string_view text) {
    return fmt::format("{:<{}}{}\n", label, kIndent, wrap_text(text, kWidth, kIndent, kIndent));
  };
  std::string out = fmt::format("{} — {}\n\n", info.id, info.title);
  out += field("Symptom:", info.symptom) + "\n";
  out += field("Cause:", info.cause) + "\n";
  out += field("Checked:", info.how_checked) + "\n";
  out += field("Fix:", info.fix) + "\n";
  out += field("Reads:", info.reads);
  out += field("Source:", info.source);
  return out;
}

nlohmann::json render_explanation_json(const checks::CheckInfo& info) {
  return {{"id", info.id},
          {"title", info.title},
          {"symptom", info.symptom},
          {"cause", info.cause},
          {"how_checked", info.how_checked},
          {"fix", info.fix},
          {"reads", info.reads},
          {"source", info.source},
          {"kind", info.lint ? "lint" : "check"}};
}

nlohmann::json render_check_list_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks::all_checks()) {
    list.push_back({{"id", c.id}, {"title", c.title}, {"source", c.source}});
  }
  return {{"checks", list}};
}

std::string render_checks_markdown() {
  std::string out =
      "# Checks\n\n"
      "Generated from sparkdoc's check table by `sparkdoc explain --markdown > docs/CHECKS.md`;\n"
      "a test keeps this page equal to the table. IDs never change meaning: G1–G10 keep the\n"
      "numbering of the spark-training-gotchas skill (002), S checks come from the two recipes\n"
      "(000, 001), F checks from what DGX Spark owners reported in the field in 2025-2026 (their\n"
      "sources and dates are in each entry; [2nd] marks a second-hand report).\n\n"
      "| ID | check | source |\n|---|---|---|\n";
  for (const auto& c : checks::all_checks()) {
    out += fmt::format("| [{}](#{}) | {} | {} |\n", c.id, to_lower(c.id), c.title, c.source);
  }
  for (const auto& c : checks::all_checks()) {
    out += fmt::format(
        "\n## {}\n\n**{}**\n\n"
        "- **Symptom:** {}\n- **Cause:** {}\n- **How sparkdoc checks:** {}\n- **Fix:** {}\n"
        "- **Reads:** {}\n- **Source:** {}\n",
        c.id, c.title, c.symptom, c.cause, c.how_checked, c.fix, c.reads, c.source);
  }
  out +=
      "\n## Field reports without a check\n\n"
      "What the field reports name on a machine that no check judges, and why.\n\n"
      "| item | why not |\n|---|---|\n";
  for (const auto& u : checks::kUncheckedFieldItems) {
    out += fmt::format("| {} | {} |\n", u.item, u.why);
  }
  return out;
}

}  // namespace sparkdoc::report
