// The layering is enforced here, not by review. docs/ARCHITECTURE.md's component table names
// every folder under src/, its layer and the components it may use; this test
//   1. checks the table against the design's rules (links point down; checks, facts and the
//      render layer use no probe and no capture; probes use nothing from checks; nothing but
//      report and cli uses checks; nothing uses cli),
//   2. scans every source file for `#include "component/..."` and every CMakeLists.txt for the
//      sparkdoc_* libraries it links, and fails on any edge the table does not allow,
//   3. and shows on planted trees that a forbidden include or link is caught.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sparkdoc::layering {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The layers from the bottom, as DESIGN.md lists them.
const std::vector<std::string> kLayers = {"core",   "model",  "probe",  "capture", "facts",
                                          "checks", "render", "engine", "cli"};
const std::set<std::string> kJudging = {"checks", "facts", "render"};

struct Component {
  std::string name;
  std::string layer;
  std::set<std::string> may_use;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t`");
  size_t b = s.find_last_not_of(" \t`");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The rows of the table whose header is "| component | layer | job | may use |".
std::map<std::string, Component> read_table(const std::string& markdown) {
  std::map<std::string, Component> out;
  std::istringstream in(markdown);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| component | layer |")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    if (line.starts_with("|---")) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream row(line.substr(1));
    while (std::getline(row, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() < 4) continue;
    Component c{cells[0], cells[1], {}};
    std::istringstream uses(cells[3]);
    std::string use;
    while (std::getline(uses, use, ',')) {
      use = trim(use);
      if (!use.empty() && use != "—" && use != "-") c.may_use.insert(use);
    }
    out[c.name] = c;
  }
  return out;
}

int rank(const std::string& layer) {
  for (size_t i = 0; i < kLayers.size(); ++i) {
    if (kLayers[i] == layer) return static_cast<int>(i);
  }
  return -1;
}

// What the design forbids, whatever the table says.
std::vector<std::string> rule_violations(const std::map<std::string, Component>& table) {
  std::vector<std::string> out;
  for (const auto& [name, c] : table) {
    if (rank(c.layer) < 0) out.push_back(name + ": unknown layer '" + c.layer + "'");
    for (const std::string& used : c.may_use) {
      auto it = table.find(used);
      if (it == table.end()) {
        out.push_back(name + " may use " + used + ", which is not a component");
        continue;
      }
      const Component& u = it->second;
      const std::string edge = name + " (" + c.layer + ") -> " + used + " (" + u.layer + ")";
      // Links point down; within a layer only probes and engines use each other.
      if (rank(u.layer) > rank(c.layer) ||
          (rank(u.layer) == rank(c.layer) && c.layer != "probe" && c.layer != "engine")) {
        out.push_back(edge + ": links point down only");
      }
      if (kJudging.contains(c.layer) && (u.layer == "probe" || u.layer == "capture")) {
        out.push_back(edge + ": checks, facts and render read no machine");
      }
      if (c.layer == "probe" && u.layer == "checks") out.push_back(edge + ": probes do not judge");
      if (u.layer == "checks" && c.layer != "render" && c.layer != "cli") {
        out.push_back(edge + ": only report and cli use checks");
      }
      if (u.layer == "cli") out.push_back(edge + ": nothing uses the cli");
    }
  }
  return out;
}

// Every `#include "X/..."` of a component's files whose X is another component.
std::vector<std::string> include_violations(const fs::path& src,
                                            const std::map<std::string, Component>& table) {
  std::vector<std::string> out;
  static const std::regex include(R"re(^\s*#\s*include\s+"([a-z_0-9]+)/[^"]+")re");
  for (const auto& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    auto self = table.find(name);
    if (self == table.end()) {
      out.push_back("src/" + name + " is not in the component table");
      continue;
    }
    for (const auto& file : fs::recursive_directory_iterator(dir.path())) {
      const std::string ext = file.path().extension().string();
      if (ext != ".h" && ext != ".cpp" && ext != ".c" && ext != ".in") continue;
      std::istringstream in(slurp(file.path()));
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const std::string used = m[1];
        if (used == name || used == "sparkdoc") continue;  // itself; the public C header
        if (!table.contains(used)) continue;               // a system header spelt with quotes
        if (!self->second.may_use.contains(used)) {
          out.push_back(fs::relative(file.path(), src.parent_path()).string() + ":" +
                        std::to_string(number) + " includes " + used + "/ (" + name + " may use: " +
                        [&] {
                          std::string s;
                          for (const auto& u : self->second.may_use)
                            s += (s.empty() ? "" : ", ") + u;
                          return s.empty() ? std::string("nothing") : s;
                        }() +
                        ")");
        }
      }
    }
  }
  return out;
}

// The component a CMake target belongs to: sparkdoc_<component>, or a library named after it
// (sparkdoc_watch_model is watch's, sparkdoc_cli_commands cli's); libsparkdoc.so (sparkdoc_abi)
// is load's and the sparkdoc binary cli's. "" for the build's own interface targets.
std::string component_of_target(const std::string& target,
                                const std::map<std::string, Component>& table) {
  if (target == "sparkdoc") return "cli";
  if (target == "sparkdoc_abi") return "load";
  if (!target.starts_with("sparkdoc_")) return "";
  const std::string name = target.substr(9);
  std::string best;
  for (const auto& [component, c] : table) {
    if ((name == component || name.starts_with(component + "_")) &&
        component.size() > best.size()) {
      best = component;
    }
  }
  return best;
}

// Every sparkdoc_* library a component's CMakeLists.txt links that the table does not allow.
std::vector<std::string> link_violations(const fs::path& src,
                                         const std::map<std::string, Component>& table) {
  std::vector<std::string> out;
  static const std::regex call(R"(target_link_libraries\s*\(([^)]*)\))");
  static const std::regex word(R"([A-Za-z0-9_:]+)");
  for (const auto& dir : fs::directory_iterator(src)) {
    const fs::path cmake = dir.path() / "CMakeLists.txt";
    if (!dir.is_directory() || !fs::exists(cmake)) continue;
    const std::string text = slurp(cmake);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call);
         it != std::sregex_iterator(); ++it) {
      const std::string args = (*it)[1];
      std::vector<std::string> words;
      for (auto w = std::sregex_iterator(args.begin(), args.end(), word);
           w != std::sregex_iterator(); ++w) {
        words.push_back(w->str());
      }
      if (words.empty()) continue;
      const std::string from = component_of_target(words.front(), table);
      if (from.empty()) continue;
      for (size_t i = 1; i < words.size(); ++i) {
        const std::string to = component_of_target(words[i], table);
        if (to.empty() || to == from) continue;
        if (!table.at(from).may_use.contains(to)) {
          out.push_back("src/" + dir.path().filename().string() +
                        "/CMakeLists.txt: " + words.front() + " links " + words[i] + " (" + from +
                        " may not use " + to + ")");
        }
      }
    }
  }
  return out;
}

std::string lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "  " + x + "\n";
  return s;
}

const fs::path kSource = SPARKDOC_SOURCE_DIR;

TEST(Layering, TheTableKeepsTheDesignsRules) {
  auto table = read_table(slurp(kSource / "docs" / "ARCHITECTURE.md"));
  ASSERT_GE(table.size(), 20u) << "docs/ARCHITECTURE.md lost its component table";
  EXPECT_THAT(rule_violations(table), IsEmpty());
}

TEST(Layering, EveryFolderIsAComponentOfTheTable) {
  auto table = read_table(slurp(kSource / "docs" / "ARCHITECTURE.md"));
  for (const auto& [name, c] : table) {
    EXPECT_TRUE(fs::is_directory(kSource / "src" / name))
        << name << " is in the table, not in src/";
  }
}

TEST(Layering, IncludesFollowTheTable) {
  auto table = read_table(slurp(kSource / "docs" / "ARCHITECTURE.md"));
  auto bad = include_violations(kSource / "src", table);
  EXPECT_THAT(bad, IsEmpty()) << lines(bad);
}

TEST(Layering, LinksFollowTheTable) {
  auto table = read_table(slurp(kSource / "docs" / "ARCHITECTURE.md"));
  auto bad = link_violations(kSource / "src", table);
  EXPECT_THAT(bad, IsEmpty()) << lines(bad);
}

// A planted tree: the checker must see what a careless change would do.
class PlantedTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("sparkdoc-layering-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    table_ = read_table(
        "| component | layer | job | may use |\n|---|---|---|---|\n"
        "| core | core | x | — |\n| model | model | x | core |\n| sys | probe | x | core, model |\n"
        "| facts | facts | x | core, model |\n| checks | checks | x | core, model, facts |\n"
        "| report | render | x | checks, facts, model, core |\n| cli | cli | x | core, sys |\n");
    for (const auto& [name, c] : table_) write("src/" + name + "/a.h", "#pragma once\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  fs::path root_;
  std::map<std::string, Component> table_;
};

TEST_F(PlantedTree, AProbeIncludeInAChecksFileIsCaught) {
  EXPECT_THAT(include_violations(root_ / "src", table_), IsEmpty());
  write("src/checks/g99.cpp", "#include \"checks/a.h\"\n#include \"sys/a.h\"\n");
  auto bad = include_violations(root_ / "src", table_);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], HasSubstr("src/checks/g99.cpp:2 includes sys/"));
}

TEST_F(PlantedTree, AChecksIncludeInAProbeIsCaught) {
  write("src/sys/probe.cpp", "#include <sys/stat.h>\n#include \"checks/a.h\"\n");
  auto bad = include_violations(root_ / "src", table_);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], HasSubstr("src/sys/probe.cpp:2 includes checks/"));
}

TEST_F(PlantedTree, AProbeLinkOfTheChecksIsCaught) {
  write("src/checks/CMakeLists.txt",
        "add_library(sparkdoc_checks STATIC a.cpp)\n"
        "target_link_libraries(sparkdoc_checks\n  PUBLIC sparkdoc_facts sparkdoc_sys\n"
        "  PRIVATE sparkdoc_warnings)\n");
  auto bad = link_violations(root_ / "src", table_);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], HasSubstr("sparkdoc_checks links sparkdoc_sys"));
}

TEST_F(PlantedTree, ATableThatAllowsWhatTheDesignForbidsIsCaught) {
  table_["checks"].may_use.insert("sys");
  table_["sys"].may_use.insert("checks");
  table_["facts"].may_use.insert("cli");
  auto bad = rule_violations(table_);
  EXPECT_THAT(lines(bad), HasSubstr("checks (checks) -> sys (probe): checks, facts and render"));
  EXPECT_THAT(lines(bad), HasSubstr("sys (probe) -> checks (checks): links point down only"));
  EXPECT_THAT(lines(bad), HasSubstr("facts (facts) -> cli (cli): nothing uses the cli"));
}

TEST_F(PlantedTree, AFolderOutsideTheTableIsCaught) {
  write("src/stray/x.cpp", "\n");
  EXPECT_THAT(lines(include_violations(root_ / "src", table_)),
              HasSubstr("src/stray is not in the component table"));
}

}  // namespace
}  // namespace sparkdoc::layering
