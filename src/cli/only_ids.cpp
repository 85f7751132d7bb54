#include "cli/only_ids.h"

#include "core/strings.h"

namespace sparkdoc::cli {

Result<std::vector<std::string>> only_ids(const std::vector<std::string>& items,
                                          bool (*accepts)(const checks::CheckInfo&)) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    for (std::string_view part : split(item, ',')) {
      std::string id(trim(part));
      if (id.empty()) continue;
      const checks::CheckInfo* info = checks::find_check(id);
      if (info == nullptr || !accepts(*info)) return fail(id);
      out.push_back(std::move(id));
    }
  }
  return out;
}

}  // namespace sparkdoc::cli
