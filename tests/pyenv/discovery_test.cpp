#include "pyenv/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture.h"

namespace sparkdoc::pyenv {
namespace {

using ::testing::ElementsAre;
using testing::fixture;

constexpr const char* kNgcPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

DiscoveryOptions on(const std::string& machine) {
  DiscoveryOptions options;
  options.root = Root(fixture(machine));
  return options;
}

TEST(FindEnvironments, NgcContainerSystemPython) {
  DiscoveryOptions options = on("ngc");
  options.path = kNgcPath;
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "PATH");
  EXPECT_EQ(envs[0].prefix, "/usr");
  EXPECT_EQ(envs[0].interpreter, "/usr/bin/python3");
  EXPECT_EQ(envs[0].python_version, "3.12");
  // pip's target in Debian-based images first, apt's second; /usr/lib/python3.12 has no
  // dist-packages here, so it is not listed.
  EXPECT_THAT(envs[0].site_packages, ElementsAre("/usr/local/lib/python3.12/dist-packages",
                                                 "/usr/lib/python3/dist-packages"));
}

TEST(FindEnvironments, SystemSitePackagesVenvSeesTheBaseFolders) {
  DiscoveryOptions options = on("ngc");
  options.virtual_env = "/workspace/venv";
  options.path = std::string("/workspace/venv/bin:") + kNgcPath;
  auto envs = find_environments(options);
  // python3 on PATH is the venv's own: one environment, not two.
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "VIRTUAL_ENV");
  EXPECT_EQ(envs[0].prefix, "/workspace/venv");
  EXPECT_EQ(envs[0].interpreter, "/workspace/venv/bin/python3");
  EXPECT_EQ(envs[0].python_version, "3.12");
  EXPECT_THAT(envs[0].site_packages, ElementsAre("/workspace/venv/lib/python3.12/site-packages",
                                                 "/usr/local/lib/python3.12/dist-packages",
                                                 "/usr/lib/python3/dist-packages"));
}

TEST(FindEnvironments, ExplicitChoicesComeFirstAndDeduplicateByPrefix) {
  DiscoveryOptions options = on("ngc");
  options.site_packages = "/usr/local/lib/python3.12/dist-packages";
  options.virtual_env = "/workspace/venv";
  options.path = kNgcPath;
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(envs[0].source, "--site-packages");
  EXPECT_EQ(envs[0].prefix, "/usr") << "Debian's /usr/local dist-packages belong to /usr";
  EXPECT_EQ(envs[0].python_version, "3.12");
  EXPECT_EQ(envs[0].interpreter, "/usr/bin/python3");
  EXPECT_THAT(envs[0].site_packages, ElementsAre("/usr/local/lib/python3.12/dist-packages"));
  EXPECT_EQ(envs[1].source, "VIRTUAL_ENV");
}

TEST(FindEnvironments, PythonByPathOrByName) {
  for (const char* python : {"/usr/bin/python3.12", "python3.12"}) {
    DiscoveryOptions options = on("ngc");
    options.python = python;
    options.path = kNgcPath;
    auto envs = find_environments(options);
    ASSERT_EQ(envs.size(), 1u) << python;
    EXPECT_EQ(envs[0].source, "--python");
    EXPECT_EQ(envs[0].prefix, "/usr");
    EXPECT_EQ(envs[0].interpreter, "/usr/bin/python3.12");
    EXPECT_EQ(envs[0].site_packages.size(), 2u);
  }
}

TEST(FindEnvironments, PythonNamingAnEnvironmentFolder) {
  DiscoveryOptions options = on("venv-cu12");
  options.python = "/home/ml/venv";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "--python");
  EXPECT_EQ(envs[0].prefix, "/home/ml/venv");
  EXPECT_EQ(envs[0].interpreter, "/home/ml/venv/bin/python3");
  EXPECT_EQ(envs[0].python_version, "3.12");
}

TEST(FindEnvironments, MissingExplicitPythonIsStillListed) {
  DiscoveryOptions options = on("ngc");
  options.python = "/opt/missing/bin/python3";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "--python");
  EXPECT_EQ(envs[0].interpreter, "/opt/missing/bin/python3");
  EXPECT_TRUE(envs[0].site_packages.empty());
}

TEST(FindEnvironments, PipVenvWithTrailingSlashAndLib64Link) {
  DiscoveryOptions options = on("venv-cu12");
  options.virtual_env = "/home/ml/venv/";
  options.path = "/home/ml/venv/bin:/usr/bin:/bin";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].prefix, "/home/ml/venv");
  EXPECT_EQ(envs[0].python_version, "3.12");
  // lib64 -> lib is the same folder, listed once.
  EXPECT_THAT(envs[0].site_packages, ElementsAre("/home/ml/venv/lib/python3.12/site-packages"));
}

TEST(FindEnvironments, VenvFoundThroughPathAlone) {
  DiscoveryOptions options = on("venv-cu12");
  options.path = "/home/ml/venv/bin";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "PATH");
  EXPECT_EQ(envs[0].prefix, "/home/ml/venv") << "the venv, not the base interpreter's prefix";
  EXPECT_EQ(envs[0].interpreter, "/home/ml/venv/bin/python3");
}

TEST(FindEnvironments, CondaPrefixAndAShimOnPath) {
  DiscoveryOptions options = on("conda-cpu");
  options.path = "/root/.pyenv/shims:/opt/conda/envs/cpu/bin:/usr/bin";
  auto from_path = find_environments(options);
  ASSERT_EQ(from_path.size(), 1u);
  EXPECT_EQ(from_path[0].source, "PATH") << "the shim has no environment; the next python3 has";
  EXPECT_EQ(from_path[0].prefix, "/opt/conda/envs/cpu");
  EXPECT_EQ(from_path[0].python_version, "3.11");

  options.conda_prefix = "/opt/conda/envs/cpu";
  auto from_conda = find_environments(options);
  ASSERT_EQ(from_conda.size(), 1u);
  EXPECT_EQ(from_conda[0].source, "CONDA_PREFIX");
  EXPECT_EQ(from_conda[0].interpreter, "/opt/conda/envs/cpu/bin/python3");
  EXPECT_THAT(from_conda[0].site_packages,
              ElementsAre("/opt/conda/envs/cpu/lib/python3.11/site-packages"));
}

TEST(FindEnvironments, UvVenvVersionInfo) {
  DiscoveryOptions options = on("mixed-cpu-cu13");
  options.virtual_env = "/opt/venv";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].python_version, "3.12");
}

// 001 uses uv: `uv run` takes the project's .venv without activating it. Found from the working
// directory or any folder above it, before PATH's python3 (issue 18).
TEST(FindEnvironments, AnUnactivatedUvVenvOfTheWorkingDirectory) {
  DiscoveryOptions options = on("pyenv-uv");
  options.path = "/home/ml/.pyenv/shims:/usr/bin";
  options.cwd = "/home/ml/project/src";
  auto envs = find_environments(options);
  ASSERT_GE(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, ".venv");
  EXPECT_EQ(envs[0].prefix, "/home/ml/project/.venv");
  EXPECT_EQ(envs[0].python_version, "3.12");
  EXPECT_THAT(envs[0].site_packages,
              ElementsAre("/home/ml/project/.venv/lib/python3.12/site-packages"));
}

// A pyenv shim is a bash script with no environment of its own: the version it runs is
// $PYENV_VERSION, else the nearest .python-version, else $PYENV_ROOT/version.
TEST(FindEnvironments, APyenvShimIsResolvedAsPyenvDoes) {
  DiscoveryOptions options = on("pyenv-uv");
  options.path = "/home/ml/.pyenv/shims:/usr/bin";
  options.cwd = "/home/ml/other";
  auto envs = find_environments(options);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].source, "pyenv");
  EXPECT_EQ(envs[0].prefix, "/home/ml/.pyenv/versions/3.12.7");
  EXPECT_THAT(envs[0].site_packages,
              ElementsAre("/home/ml/.pyenv/versions/3.12.7/lib/python3.12/site-packages"));
  options.cwd = "/";  // no .python-version: the global version file
  EXPECT_EQ(find_environments(options).at(0).source, "pyenv");
  options.pyenv_version = "3.11.9:3.12.7";  // not installed: nothing is guessed
  EXPECT_TRUE(find_environments(options).empty());
  options.pyenv_version = "system";  // the next python3 on PATH (none in this tree)
  EXPECT_TRUE(find_environments(options).empty());
}

TEST(FindEnvironments, NothingToFind) {
  EXPECT_TRUE(find_environments(on("ngc")).empty());
  DiscoveryOptions stale = on("ngc");
  stale.virtual_env = "/home/gone/venv";
  stale.conda_prefix = "/opt/conda";
  stale.path = "relative/bin::/nonexistent";
  EXPECT_TRUE(find_environments(stale).empty());
}

TEST(PyvenvCfg, Parse) {
  PyvenvCfg cfg = parse_pyvenv_cfg(
      "home = /usr/bin\n"
      "include-system-site-packages = True\r\n"
      "version = 3.12.3\n"
      "executable = /usr/bin/python3.12\n");
  EXPECT_EQ(cfg.home, "/usr/bin");
  EXPECT_TRUE(cfg.include_system_site_packages);
  EXPECT_EQ(cfg.version, "3.12.3");
  PyvenvCfg uv = parse_pyvenv_cfg("home = /opt/py/bin\nversion_info = 3.13.1\n");
  EXPECT_EQ(uv.version, "3.13.1");
  EXPECT_FALSE(uv.include_system_site_packages);
  EXPECT_EQ(parse_pyvenv_cfg("garbage\n=\n"), PyvenvCfg{});
}

TEST(PythonMajorMinor, Forms) {
  EXPECT_EQ(python_major_minor("3.12.3"), "3.12");
  EXPECT_EQ(python_major_minor("3.12.3.final.0"), "3.12");
  EXPECT_EQ(python_major_minor("python3.12"), "3.12");
  EXPECT_EQ(python_major_minor("3.9"), "3.9");
  EXPECT_EQ(python_major_minor("3.13.0rc1"), "3.13");
  EXPECT_FALSE(python_major_minor("python3"));
  EXPECT_FALSE(python_major_minor("2.7.18"));
  EXPECT_FALSE(python_major_minor("3."));
  EXPECT_FALSE(python_major_minor(""));
}

}  // namespace
}  // namespace sparkdoc::pyenv
