// `sparkdoc compare` output: the rows as a text table or as JSON. Pure and deterministic, so
// golden files compare byte for byte. JSON keys are public: append only.
//
// Text: up to kColumnsMax nodes get a column each; more (a fleet) get each row's values grouped,
// the commonest first: "580.95.05: 998 nodes (node0001...); 580.82.09: node0999, node1000".
// Every row is followed by its why. Without `all`, only rows that differ or are not recorded
// everywhere are shown.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "compare/nodes.h"
#include "compare/stream.h"

namespace sparkdoc::compare {

inline constexpr size_t kColumnsMax = 6;

std::string render_compare_text(const Comparison& comparison, bool all);

// {"nodes": [...], "rows": [{"reading", "severity", "state", "why", "values": {NODE: VALUE or
// null}}], "differences": N, "breaking": N, "breaks_job": bool, "problems": [{"node",
// "message", "skipped"}]}
nlohmann::json render_compare_json(const Comparison& comparison,
                                   const std::vector<Problem>& problems, bool all);

}  // namespace sparkdoc::compare
