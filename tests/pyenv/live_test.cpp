// The pyenv probe on whatever machine runs the tests: only that it returns, with each
// environment's paths absolute. Values depend on the machine and are not checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "pyenv/probe.h"

namespace sparkdoc::pyenv {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

TEST(LiveMachine, ReadPythonDoesNotCrash) {
  DiscoveryOptions options;
  options.virtual_env = env_or_empty("VIRTUAL_ENV");
  options.conda_prefix = env_or_empty("CONDA_PREFIX");
  options.path = env_or_empty("PATH");
  options.ld_library_path = env_or_empty("LD_LIBRARY_PATH");
  auto python = read_python(options);
  if (!python) {
    EXPECT_NE(python.missing().why, Why::kError) << python.reason();
    return;
  }
  for (const PythonEnv& env : *python) {
    EXPECT_FALSE(env.prefix.empty());
    for (const std::string& dir : env.site_packages) EXPECT_EQ(dir.front(), '/') << dir;
  }
}

}  // namespace
}  // namespace sparkdoc::pyenv
