// Golden files shared by the report, mem and clean tests: every fixture snapshot in
// tests/fixtures/snapshots/ is rendered and compared byte for byte with a file in
// tests/fixtures/golden/. SPARKDOC_UPDATE_GOLDEN=1 rewrites the files; review the diff like code.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sparkdoc::testing {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void compare_or_update(const std::filesystem::path& golden, const std::string& actual) {
  if (std::getenv("SPARKDOC_UPDATE_GOLDEN")) {
    std::ofstream(golden) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden))
      << golden << " missing; run with SPARKDOC_UPDATE_GOLDEN=1";
  EXPECT_EQ(slurp(golden), actual) << "golden mismatch: " << golden;
}

// The fixture snapshots, sorted; NAME.workload.json sidecars are not snapshots.
inline std::vector<std::filesystem::path> fixture_snapshots() {
  std::vector<std::filesystem::path> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(SPARKDOC_FIXTURES) / "snapshots")) {
    auto name = e.path().filename().string();
    if (name.ends_with(".json") && !name.ends_with(".workload.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::filesystem::path golden_dir() {
  return std::filesystem::path(SPARKDOC_FIXTURES) / "golden";
}

}  // namespace sparkdoc::testing
