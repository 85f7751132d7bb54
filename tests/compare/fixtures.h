// The two-node fixture pair of `sparkdoc compare` (tests/fixtures/compare/generate.py): node a a
// healthy GB10, node b with the planted drift. Test harness only.
#pragma once

#include <string>

#include "golden.h"
#include "model/snapshot_json.h"

namespace sparkdoc::testing {

inline std::string compare_fixture_path(const std::string& name) {
  return std::string(SPARKDOC_FIXTURES) + "/compare/" + name;
}

inline std::string compare_fixture_text(const std::string& name) {
  return slurp(compare_fixture_path(name));
}

inline Snapshot compare_fixture(const std::string& name) {
  return snapshot_from_text(compare_fixture_text(name)).value();
}

}  // namespace sparkdoc::testing
