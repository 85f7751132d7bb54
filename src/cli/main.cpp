// sparkdoc: a doctor for ML training on DGX Spark and any Linux machine with an NVIDIA GPU.
#include <malloc.h>

#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/version.h"

namespace {

// glibc gives each thread that allocates its own malloc arena, with about a megabyte of touched
// memory apiece: the audit's reader threads (in check, snapshot, audit and run's preflight) and
// NVML's threads. Two arenas serve these short, mostly single-threaded commands as fast: the
// audit of an 879-file tree with four readers peaked at 12.7 MB (median of seven) with glibc's
// default and 11.4 MB with two arenas, in the same 0.06-0.07 s (docs/BENCHMARKS.md). load and
// bw, whose threads move data, keep glibc's default.
void limit_malloc_arenas() {
  mallopt(M_ARENA_MAX, 2);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparkdoc::cli;
  // `sparkdoc` and `sparkdoc --json ...` mean `sparkdoc check ...`.
  std::vector<std::string> args(argv, argv + argc);
  // `sparkdoc help` and `sparkdoc help run`, as git has them.
  if (args.size() > 1 && args[1] == "help") {
    if (args.size() > 2) {
      args.erase(args.begin() + 1);
      args.insert(args.begin() + 2, "--help");
    } else {
      args[1] = "--help";
    }
  }
  if (args.size() == 1 ||
      (args[1].size() > 1 && args[1][0] == '-' && args[1] != "--help" && args[1] != "-h" &&
       args[1] != "--version")) {
    args.insert(args.begin() + 1, "check");
  }
  try {
    CLI::App app(
        "sparkdoc: preflight, explain and record a machine for ML training on NVIDIA DGX Spark "
        "(GB10) and any Linux machine with an NVIDIA GPU.\nWith no command, runs `check`.",
        "sparkdoc");
    app.set_version_flag("--version", std::string(sparkdoc::kVersion));
    app.require_subcommand(1, 1);
    app.fallthrough(false);
    auto check = add_check_command(app);
    auto explain = add_explain_command(app);
    auto snapshot = add_snapshot_command(app);
    auto mem = add_mem_command(app);
    auto clean = add_clean_command(app);
    auto audit = add_audit_command(app);
    auto plan = add_plan_command(app);
    auto load = add_load_command(app);
    auto bw = add_bw_command(app);
    auto watch = add_watch_command(app);
    auto run = add_run_command(app);
    auto report = add_report_command(app);
    auto lint = add_lint_command(app);
    // CLI11 would answer "A subcommand is required" to a misspelt command.
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->check_name(args[1]);
    }
    if (!known && (args[1].empty() || args[1][0] != '-')) {
      std::cerr << "sparkdoc: unknown command '" << args[1] << "'; the commands are " << names
                << " (sparkdoc --help)\n";
      return kExitUsage;
    }
    std::vector<const char*> cargs;
    for (auto& a : args) cargs.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(cargs.size()), cargs.data());
    } catch (const CLI::ParseError& e) {
      int rc = app.exit(e);
      return rc == 0 ? kExitReady : kExitUsage;
    }
    if (!app.got_subcommand("load") && !app.got_subcommand("bw")) limit_malloc_arenas();
    notice_unrestored_journal(app);
    if (app.got_subcommand("check")) return check();
    if (app.got_subcommand("explain")) return explain();
    if (app.got_subcommand("snapshot")) return snapshot();
    if (app.got_subcommand("mem")) return mem();
    if (app.got_subcommand("clean")) return clean();
    if (app.got_subcommand("audit")) return audit();
    if (app.got_subcommand("plan")) return plan();
    if (app.got_subcommand("load")) return load();
    if (app.got_subcommand("bw")) return bw();
    if (app.got_subcommand("watch")) return watch();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("report")) return report();
    if (app.got_subcommand("lint")) return lint();
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "sparkdoc: internal error: " << e.what() << "\n";
    return kExitUsage;
  } catch (...) {
    std::cerr << "sparkdoc: internal error\n";
    return kExitUsage;
  }
}
