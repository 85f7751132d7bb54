// The man pages and shell completions are written from the command line itself: every command
// of the command table and every option of each command must be in them, and they must work
// in the programs that read them (bash runs the completion; groff renders the pages).
#include "cli/docs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli/app.h"
#include "cli/commands.h"
#include "shell.h"

namespace sparkdoc::cli {
namespace {

namespace fs = std::filesystem;
using sparkdoc::testing::run_shell;
using sparkdoc::testing::run_shell_stdout;
using ::testing::HasSubstr;

// Every spelling of every option of `command`, read from the app (not from docs.cpp).
std::set<std::string> option_spellings(const CLI::App& command) {
  std::set<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const auto& s : option->get_snames()) names.insert("-" + s);
    for (const auto& l : option->get_lnames()) names.insert("--" + l);
  }
  return names;
}

std::set<std::string> lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

class Docs : public ::testing::Test {
 protected:
  void SetUp() override {
    application_ = make_application();
    // One folder per test: ctest runs the tests of this file at once.
    dir_ = fs::path(SPARKDOC_BINARY_DIR) /
           ("cli_docs_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  const CLI::App& app() const { return *application_.app; }
  const CLI::App& command(std::string_view name) const {
    return *app().get_subcommand(std::string(name));
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  // What bash's completion offers for these words, the last being the one completed.
  std::set<std::string> complete(const fs::path& script, const std::string& words) const {
    const std::string program = "cd " + dir_.string() + " && source " + script.string() +
                                " && COMP_WORDS=(" + words +
                                ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && { _sparkdoc; "
                                "printf '%s\\n' \"${COMPREPLY[@]}\"; }";
    std::ofstream(dir_ / "complete.sh") << program << "\n";
    return lines(run_shell_stdout("bash " + (dir_ / "complete.sh").string()).out);
  }

  Application application_;
  fs::path dir_;
};

TEST_F(Docs, BashCompletesEveryCommandAndEveryOption) {
  const fs::path script = write("sparkdoc.bash", bash_completion(app()));
  std::set<std::string> commands = complete(script, "sparkdoc ''");
  for (const Command& c : kCommands) {
    EXPECT_TRUE(commands.count(std::string(c.name))) << c.name;
  }
  EXPECT_TRUE(commands.count("--version"));
  for (const Command& c : kCommands) {
    const std::set<std::string> offered =
        complete(script, "sparkdoc " + std::string(c.name) + " -");
    EXPECT_EQ(offered, option_spellings(command(c.name))) << c.name;
  }
  // After an option that takes a file, file names; after `help`, the commands.
  std::ofstream(dir_ / "run.jsonl") << "{}\n";
  EXPECT_TRUE(complete(script, "sparkdoc report ru").count("run.jsonl"));
  EXPECT_TRUE(complete(script, "sparkdoc check --snapshot ru").count("run.jsonl"));
  EXPECT_EQ(complete(script, "sparkdoc help pl"), std::set<std::string>{"plan"});
}

TEST_F(Docs, ZshCompletionNamesEveryCommandAndOption) {
  const std::string script = zsh_completion(app());
  EXPECT_THAT(script, ::testing::StartsWith("#compdef sparkdoc\n"));
  for (const Command& c : kCommands) {
    EXPECT_THAT(script, HasSubstr("    '" + std::string(c.name) + ":"));
    EXPECT_THAT(script, HasSubstr("    " + std::string(c.name) + ")\n"));
    for (const std::string& spelling : option_spellings(command(c.name))) {
      EXPECT_THAT(script, ::testing::ContainsRegex("['})]" + spelling + "\\["))
          << c.name << " " << spelling;
    }
  }
  // A set of choices completes as its words; a value's message has no validator text.
  EXPECT_THAT(script,
              HasSubstr("'--color[Colour the verdict words\\: auto (on a terminal), always, "
                        "never]:WHEN:(auto always never)'"));
  EXPECT_THAT(script, HasSubstr("]:R: '"));
  if (run_shell("command -v zsh").status == 0) {
    const fs::path file = write("_sparkdoc", script);
    auto checked = run_shell("zsh -n " + file.string());
    EXPECT_EQ(checked.status, 0) << checked.out;
  }
}

TEST_F(Docs, EachCommandHasAManPageWithEveryOption) {
  const bool have_groff = run_shell("command -v groff").status == 0;
  for (const Command& c : kCommands) {
    const std::string page = man_page_command(command(c.name), c.summary, "0.1.0", "2026-12-01");
    EXPECT_THAT(page, ::testing::StartsWith(".TH SPARKDOC-"));
    EXPECT_THAT(page,
                HasSubstr("sparkdoc\\-" + roff_escape(c.name) + " \\- " + roff_escape(c.summary)));
    for (const std::string& spelling : option_spellings(command(c.name))) {
      EXPECT_THAT(page, HasSubstr("\\fB" + roff_escape(spelling) + "\\fR")) << spelling;
    }
    if (have_groff) {
      const fs::path file = write("sparkdoc-" + std::string(c.name) + ".1", page);
      // -ww: every warning; -z: no output but the warnings.
      auto rendered = run_shell("groff -man -Tutf8 -ww -z " + file.string());
      EXPECT_EQ(rendered.status, 0) << rendered.out;
      EXPECT_EQ(rendered.out, "") << c.name;
    }
  }
  const std::string main_page = man_page_main(app(), "0.1.0", "2026-12-01");
  for (const Command& c : kCommands) {
    EXPECT_THAT(main_page, HasSubstr("\\fBsparkdoc\\-" + roff_escape(c.name) + "\\fR(1)"));
  }
  if (have_groff) {
    auto rendered =
        run_shell("groff -man -Tutf8 -ww -z " + write("sparkdoc.1", main_page).string());
    EXPECT_EQ(rendered.out, "");
  }
}

TEST(RoffEscape, KeepsTextLiteral) {
  EXPECT_EQ(roff_escape("--json"), "\\-\\-json");
  EXPECT_EQ(roff_escape("a\\b"), "a\\eb");
  EXPECT_EQ(roff_escape(".venv first"), "\\&.venv first");
  EXPECT_EQ(roff_escape("'quoted'"), "\\&'quoted'");
}

}  // namespace
}  // namespace sparkdoc::cli
