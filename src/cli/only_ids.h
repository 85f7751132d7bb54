// The IDs of a command's --only option, for check (its checks) and lint (its rules).
#pragma once

#include <string>
#include <vector>

#include "checks/registry.h"
#include "core/result.h"

namespace sparkdoc::cli {

// The IDs named (the option repeated or comma-separated, spaces around an ID dropped), each one
// `accepts` must take; the first it does not is the error, by its ID.
Result<std::vector<std::string>> only_ids(const std::vector<std::string>& items,
                                          bool (*accepts)(const checks::CheckInfo&));

}  // namespace sparkdoc::cli
