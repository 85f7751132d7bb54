#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "checks/lint.h"
#include "cli/commands.h"
#include "cli/lint_job.h"
#include "cli/only_ids.h"
#include "core/strings.h"
#include "report/lint.h"
#include "report/report.h"

namespace sparkdoc::cli {
namespace {

struct LintFlags {
  std::vector<std::string> paths;
  std::vector<std::string> commands;
  std::vector<std::string> only;
  std::string target = "spark";
  bool json = false;
  bool strict = false;
  bool list = false;
};

int run_lint_command(const LintFlags& flags) {
  if (flags.list) {
    for (const checks::CheckInfo& r : checks::all_lint_rules()) {
      std::cout << fmt::format("{:<4} {} ({})\n", r.id, r.title, r.source);
    }
    return kExitReady;
  }
  auto only = only_ids(flags.only, [](const checks::CheckInfo& c) { return c.lint != nullptr; });
  if (!only) {
    std::cerr << fmt::format(
        "sparkdoc lint: --only: no lint rule named '{}' (sparkdoc lint --list names them)\n",
        only.error().message);
    return kExitUsage;
  }
  std::vector<std::string> paths = flags.paths;
  if (paths.empty() && flags.commands.empty()) paths.push_back(".");
  auto read = read_lint_job(paths, flags.commands);
  if (!read) {
    std::cerr << "sparkdoc lint: " << read.error().message << "\n";
    return kExitUsage;
  }
  // A whole site-packages reads as hundreds of MB of small allocations; freeing them one by one
  // costs a good part of a second just before the process ends anyway, so they are kept.
  static job::Job* kept = nullptr;
  kept = new job::Job(std::move(*read));
  const job::Job& job = *kept;
  checks::LintContext context;
  context.spark = flags.target == "spark";
  auto findings = checks::run_lint(job, context, *only);
  report::LintReport rep = report::make_lint_report(job, context, std::move(findings));
  if (flags.json) {
    std::cout << report::render_lint_json(rep, flags.strict)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << report::render_lint_text(rep, flags.strict,
                                          ::isatty(STDOUT_FILENO) == 1 && !std::getenv("NO_COLOR"));
  }
  std::cout.flush();
  return report::lint_exit_status(rep.findings, flags.strict);
}

}  // namespace

std::function<int()> add_lint_command(CLI::App& app) {
  auto flags = std::make_shared<LintFlags>();
  CLI::App* cmd = app.add_subcommand(
      "lint",
      "Judge the training job, not the machine: reads Python training scripts, Dockerfiles and "
      "compose files, shell scripts and Makefiles (docker run, pip/uv, cmake, llama-server, "
      "torchrun lines), requirements*.txt, pyproject.toml, uv.lock, accelerate/DeepSpeed/TRL "
      "configs and CMakeCache.txt, without running anything, and reports what the DGX Spark "
      "recipes learned the hard way: one line per finding, ID first (the L family), with "
      "file:line, why (seed and section) and the fix. `sparkdoc explain L9` says more about a "
      "rule. A line whose comment says `sparkdoc: ignore L9` is not reported. Exit 0, 1 on any "
      "FAIL (with --strict any WARN), 2 on a usage error.\n\nExamples:\n"
      "  sparkdoc lint                          the working directory\n"
      "  sparkdoc lint train.py Dockerfile      these files\n"
      "  sparkdoc lint --cmd \"llama-server -m m.gguf --jinja\"");
  cmd->add_option("paths", flags->paths, "Files and folders to read (default: .)")
      ->type_name("PATH");
  // One value per occurrence, so that `--cmd "..." DIR` and `--only L9 DIR` leave DIR a path.
  cmd->add_option("--cmd", flags->commands, "A command line to judge as well (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("CMD");
  cmd->add_option("--for", flags->target,
                  "What the job runs on: spark (a DGX Spark, the default) or other (rules for "
                  "GB10 are left out)")
      ->check(CLI::IsMember({"spark", "other"}))
      ->type_name("spark|other");
  cmd->add_option("--only", flags->only, "Run only these rules, e.g. --only L9,L29")
      ->delimiter(',')
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("IDS");
  cmd->add_flag("--json", flags->json, "Write the findings as JSON to stdout");
  cmd->add_flag("--strict", flags->strict, "Treat WARN as blocking (exit 1)");
  cmd->add_flag("--list", flags->list, "List the rules and exit");
  return [flags]() { return run_lint_command(*flags); };
}

}  // namespace sparkdoc::cli
