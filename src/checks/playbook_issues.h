// The offline table of known problems in NVIDIA's DGX Spark playbooks
// (github.com/NVIDIA/dgx-spark-playbooks), for G8. One static table, dated: it is a snapshot
// of the tracker, and G8 always tells people to look at the live one before an expensive run.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace sparkdoc::checks {

inline constexpr std::string_view kPlaybookTableChecked = "2026-11-29";
inline constexpr std::string_view kPlaybookIssuesUrl =
    "github.com/NVIDIA/dgx-spark-playbooks/issues";

struct PlaybookIssue {
  std::string_view playbook;  // canonical playbook name ("unsloth", "trt-llm")
  unsigned number = 0;
  bool pull_request = false;  // "PR #14" rather than "#14"
  std::string_view title;
  std::string_view date;  // opened, ISO (as precise as known)
  bool open = false;
  std::string_view gist;  // what goes wrong, and the workaround when there is one
};

std::span<const PlaybookIssue> playbook_issues();
// Canonical playbook names in the table, in first-seen order.
std::span<const std::string_view> known_playbooks();
// "TRT_LLM", "trtllm", "Two Sparks" -> the canonical name; nullopt when unknown.
std::optional<std::string_view> canonical_playbook(std::string_view name);

}  // namespace sparkdoc::checks
