// The check table, from checks/list.h (each row lives with its check), and the runner.
#include "checks/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <stdexcept>

#include "checks/common.h"
#include "checks/lint.h"
#include "core/strings.h"
#include "facts/platform.h"

namespace sparkdoc::checks {
namespace {

// The table, built once from checks/list.h.
const std::vector<CheckInfo>& table() {
  static const std::vector<CheckInfo> kTable{
#define SPARKDOC_CHECK(name) name(),
#include "checks/list.h"
#undef SPARKDOC_CHECK
  };
  return kTable;
}

}  // namespace

std::span<const CheckInfo> all_checks() {
  return table();
}

const CheckInfo* find_check(std::string_view id) {
  std::string lower = to_lower(trim(id));
  for (const auto& c : table()) {
    if (to_lower(c.id) == lower) return &c;
  }
  for (const auto& c : all_lint_rules()) {
    if (to_lower(c.id) == lower) return &c;
  }
  return nullptr;
}

std::vector<Finding> run_checks(const Snapshot& snapshot, const Workload& workload,
                                const std::vector<std::string>& only) {
  return run_checks(all_checks(), snapshot, workload, only);
}

std::vector<Finding> run_checks(std::span<const CheckInfo> table, const Snapshot& snapshot,
                                const Workload& workload, const std::vector<std::string>& only) {
  facts::Platform platform;
  try {
    platform = facts::classify_platform(snapshot);
  } catch (const std::exception& e) {
    platform.key = "no-gpu";
    platform.evidence.push_back(std::string("platform not classified: ") + e.what());
  } catch (...) {
    platform.key = "no-gpu";
    platform.evidence.push_back("platform not classified: unknown error");
  }
  std::vector<Finding> out;
  for (const auto& info : table) {
    if (!id_wanted(info.id, only)) continue;
    Finding f;
    try {
      if (!info.run) throw std::logic_error("no function in the check table");
      std::optional<std::string> not_here;
      if (info.applies) not_here = info.applies(snapshot, platform);
      f = not_here ? make_finding(info.id, Verdict::kSkip, *not_here)
                   : info.run(snapshot, workload, platform);
    } catch (const std::exception& e) {
      f = make_finding(info.id, Verdict::kFail,
                       fmt::format("internal error in check: {} (please report it with the "
                                   "output of sparkdoc snapshot)",
                                   e.what()));
    } catch (...) {
      f = make_finding(info.id, Verdict::kFail,
                       "internal error in check: unknown exception (please report it with the "
                       "output of sparkdoc snapshot)");
    }
    f.id = std::string(info.id);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace sparkdoc::checks
