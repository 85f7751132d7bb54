// G8 stale official playbooks (002 G8; reference §5).
//
// Rule, for the playbook named with --playbook (case-insensitive, aliases accepted), against
// the offline table in playbook_issues.cpp (checked 2026-11-29):
//   WARN  open issues or unmerged fixes: list number, date and gist, and send people to the
//         live tracker before an expensive run (the stack moves faster than the docs).
//   PASS  only closed items.
//   INFO  a name the table does not know.
//   SKIP  no playbook named.
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/playbook_issues.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "facts/platform.h"

namespace sparkdoc::checks::g8 {
namespace {

constexpr std::string_view kId = "G8";

std::string known_list() {
  std::vector<std::string> names;
  for (std::string_view p : known_playbooks()) names.emplace_back(p);
  return join(names, ", ");
}

std::string reference(const PlaybookIssue& i) {
  return fmt::format("{}#{} ({})", i.pull_request ? "PR " : "", i.number, i.date);
}

Finding judge(const Snapshot&, const Workload& w, const facts::Platform&) {
  if (!w.playbook || trim(*w.playbook).empty()) {
    return make_finding(kId, Verdict::kSkip,
                        "no playbook named (--playbook NAME); known: " + known_list());
  }
  auto playbook = canonical_playbook(trim(*w.playbook));
  if (!playbook) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("'{}' is not in the offline table ({} playbooks, checked "
                                    "{}); known: {}; see {}",
                                    *w.playbook, known_playbooks().size(), kPlaybookTableChecked,
                                    known_list(), kPlaybookIssuesUrl));
  }
  std::vector<std::string> open;
  std::vector<std::string> closed;
  std::vector<std::string> details;
  for (const auto& issue : playbook_issues()) {
    if (issue.playbook != *playbook) continue;
    std::string line = fmt::format("{}: {}", reference(issue), issue.gist);
    details.push_back(fmt::format("{} [{}] {} — {}", reference(issue),
                                  issue.open ? "open" : "closed", issue.title, issue.gist));
    (issue.open ? open : closed).push_back(line);
  }
  if (!open.empty()) {
    return make_finding(kId, Verdict::kWarn,
                        fmt::format("{}: {} open upstream item{}: {}; check {} before an "
                                    "expensive run (table checked {})",
                                    *playbook, open.size(), open.size() == 1 ? "" : "s",
                                    join(open, "; "), kPlaybookIssuesUrl, kPlaybookTableChecked),
                        details);
  }
  if (!closed.empty()) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("{}: only closed items in the offline table ({}); checked {}",
                                    *playbook, join(closed, "; "), kPlaybookTableChecked),
                        details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("{}: no known issues in the offline table (checked {})",
                                  *playbook, kPlaybookTableChecked),
                      details);
}

}  // namespace
}  // namespace sparkdoc::checks::g8

namespace sparkdoc::checks {

const CheckInfo& g8_playbooks() {
  static constexpr CheckInfo kInfo{
      .id = "G8",
      .title = "Stale official playbooks",
      .reads = "--playbook NAME and an offline, dated table of NVIDIA/dgx-spark-playbooks issues",
      .symptom =
          "Following an official DGX Spark playbook fails with no local misconfiguration to "
          "explain it",
      .cause =
          "The playbooks have shipped broken before and the stack moves faster than the docs: "
          "wrong image tags, missing packages, pins that no longer install.",
      .how_checked =
          "Looks the playbook up in a dated offline table of known open and closed issues.",
      .fix =
          "Read github.com/NVIDIA/dgx-spark-playbooks/issues for that playbook before an "
          "expensive run, and apply the workarounds listed there.",
      .source = "002 G8",
      .keywords =
          "playbook recipe official instructions docs tutorial guide broken fails outright "
          "dgx-spark-playbooks issue",
      .run = &g8::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
