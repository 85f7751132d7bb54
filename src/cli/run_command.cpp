// `sparkdoc run [options] -- CMD ARGS...`: the options into run::RunOptions, then the steps in
// order: the environment, the preflight and the end are cli/run_steps.h's, the supervised run
// itself run::supervise's.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/cap_clocks_option.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/run_steps.h"
#include "core/fs.h"
#include "core/strings.h"
#include "core/units.h"
#include "run/environment.h"
#include "run/process.h"
#include "run/runner.h"
#include "tune/tunables.h"
#include "watch/watch.h"

namespace sparkdoc::cli {
namespace {

struct RunFlags {
  CaptureFlags capture;
  std::vector<std::string> command;
  bool force = false;
  bool no_preflight = false;
  bool distributed = false;
  bool json = false;
  bool tune_vm = false;
  CapClocksOption cap_clocks;
  bool no_ionice = false;
  bool no_watch = false;
  std::string oom_score_adj = std::to_string(run::kDefaultOomScoreAdj);
  std::string drop_every;
  std::string drop_for = "10m";
  std::string watch_interval = "1s";
  std::string log_dir;
  std::string watch_exe;  // hidden: a stand-in for `sparkdoc watch` (tests)
};

std::string env_or(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// Whether this binary has a `watch` command to run as the sidecar.
bool has_watch_command(const CLI::App* app) {
  try {
    return app->get_subcommand("watch") != nullptr;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

int run_run(const RunFlags& flags, const CLI::App* app) {
  // Before anything else: a signal from here on is taken by the supervisor, not lost.
  run::SignalGate gate;
  if (flags.command.empty() || flags.command.front().empty()) {
    std::cerr << "sparkdoc run: no command: sparkdoc run [options] -- CMD ARGS...\n";
    return kExitUsage;
  }
  run::RunOptions o;
  o.argv = flags.command;
  o.distributed = flags.distributed;
  o.low_io_priority = !flags.no_ionice;
  o.tune_vm = flags.tune_vm;
  o.root = flags.capture.root.empty() ? Root() : Root(flags.capture.root);
  o.euid = static_cast<unsigned>(::geteuid());
  o.xdg_state_home = env_or("XDG_STATE_HOME");
  o.home = env_or("HOME");
  o.log_dir = flags.log_dir;
  o.watch = !flags.no_watch;

  if (flags.oom_score_adj == "keep") {
    o.oom_score_adj.reset();
  } else {
    auto v = parse_i64(flags.oom_score_adj);
    if (!v || *v < -1000 || *v > 1000) {
      std::cerr << "sparkdoc run: --oom-score-adj: a number from -1000 to 1000, or keep\n";
      return kExitUsage;
    }
    o.oom_score_adj = static_cast<int>(*v);
  }
  auto interval = parse_duration_s(flags.watch_interval);
  // The sidecar is `sparkdoc watch --interval`: refused here, not after the command started.
  if (!interval || *interval < watch::kMinIntervalS) {
    std::cerr << "sparkdoc run: --watch-interval: "
              << (interval ? std::string("at least 50ms") : interval.error().message) << "\n";
    return kExitUsage;
  }
  o.watch_interval_s = *interval;
  if (!flags.drop_every.empty()) {
    auto every = parse_duration_s(flags.drop_every);
    auto limit = parse_duration_s(flags.drop_for);
    if (!every || *every < 1 || !limit) {
      std::cerr << "sparkdoc run: --drop-cache-every/--drop-cache-for: "
                << (!every   ? every.error().message
                    : !limit ? limit.error().message
                             : std::string("drop at most once a second"))
                << "\n";
      return kExitUsage;
    }
    o.drop_every_s = *every;
    o.drop_for_s = *limit;
  }
  if (auto cap = cap_clocks_of(flags.cap_clocks)) {
    if (!*cap) {
      std::cerr << "sparkdoc run: " << cap->error().message << "\n";
      return kExitUsage;
    }
    o.cap_clocks = **cap;
  }
  if (flags.tune_vm || o.drop_every_s || o.cap_clocks) {
    if (auto problem = tune::privilege_problem(o.euid)) {
      std::cerr << "sparkdoc run: --tune-vm, --cap-clocks and --drop-cache-every: " << *problem
                << ". Run it with sudo, or without them. Nothing was started.\n";
      return kExitUsage;
    }
  }
  if (!flags.watch_exe.empty()) {
    o.watch_exe = flags.watch_exe;
  } else if (!has_watch_command(app)) {
    o.watch_unavailable = "this sparkdoc has no `watch` command";
  }
  std::string command_text = "run";
  if (flags.tune_vm) command_text += " --tune-vm";
  if (o.cap_clocks) {
    command_text += " --cap-clocks=" + std::to_string(o.cap_clocks->min_mhz) + "," +
                    std::to_string(o.cap_clocks->max_mhz);
  }
  if (o.drop_every_s) command_text += " --drop-cache-every " + flags.drop_every;
  o.command_text = command_text + " -- " + join(flags.command, " ");

  // A journal a SIGKILLed sparkdoc left is restored before anything new is changed.
  auto leftover = run::restore_leftover_journal(o.root, o.euid, o.xdg_state_home, o.home);
  for (const auto& line : leftover.lines) std::cerr << line << "\n";

  o.env = run::plan_environment(environ, flags.distributed);
  say_environment(o.env);
  if (flags.no_preflight) {
    o.preflight = "skipped (--no-preflight)";
  } else {
    auto verdict = preflight(flags.capture, flags.command, flags.force, o.env);
    if (!verdict) return kExitBlocked;
    o.preflight = *verdict;
  }
  auto outcome = run::supervise(o, gate, std::cerr);
  if (!outcome) {
    std::cerr << "sparkdoc run: " << outcome.error().message << "\n";
    return kExitBlocked;
  }
  finish_run(*outcome, flags.json);
  std::cout.flush();
  return outcome->exit_status;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Launch a training command the way the recipes do, and watch it: preflight of the machine "
      "and of the scripts the command names (`sparkdoc lint`; stops on a "
      "FAIL unless --force), a clean environment (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_*, NCCL_*, "
      "OMPI_*, MPI_*, PMI_* removed unless --distributed; ACCELERATE_USE_FSDP=0, "
      "ACCELERATE_USE_DEEPSPEED=0; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
      "max_split_size_mb:512 and TOKENIZERS_PARALLELISM=false unless you set them), I/O priority "
      "best-effort 7 and OOM score 300 (000 §6), `sparkdoc watch` beside it, signals forwarded, "
      "optional page-cache drops during the load (000 §7), vm tuning and a GPU clock cap (the DGX "
      "Spark's fix for its power-off under load), journaled and restored on every way out. Ends "
      "with a summary; the logs stay in --log-dir for `sparkdoc report`. "
      "Exits with the command's status (128+N when signal N killed it); before the command "
      "starts: 1 blocked (preflight FAIL, tuning refused), 2 usage.\n"
      "Example: sudo sparkdoc run --drop-cache-every 20s --tune-vm --cap-clocks -- python "
      "train.py");
  cmd->add_option("command", flags->command, "The command and its arguments, after --")
      ->type_name("CMD ARGS...");
  cmd->add_flag("--force", flags->force, "Run even when the preflight has a FAIL");
  cmd->add_flag("--no-preflight", flags->no_preflight, "Skip the preflight checks");
  cmd->add_flag("--distributed", flags->distributed,
                "Keep the distributed-launch variables (a multi-node run); accelerate's config is "
                "then not overridden either");
  cmd->add_flag("--json", flags->json,
                "Print the end summary as one JSON line on stdout (after the command's output)");
  cmd->add_option("--drop-cache-every", flags->drop_every,
                  "Drop the page cache this often while the model loads, e.g. 20s (root); stops "
                  "when GPU memory stops growing or after --drop-cache-for")
      ->type_name("DURATION");
  cmd->add_option("--drop-cache-for", flags->drop_for,
                  "The longest load window for --drop-cache-every")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_flag("--tune-vm", flags->tune_vm,
                "Set min_free_kbytes=1048576 and vfs_cache_pressure=500 for the run (root; "
                "journaled, restored at the end)");
  add_cap_clocks_option(*cmd, flags->cap_clocks,
                        "while the command runs, and reset them (or put back the cap `sparkdoc "
                        "clean --cap-clocks` set) when it ends");
  cmd->add_option("--oom-score-adj", flags->oom_score_adj,
                  "OOM score adjustment of the command, -1000..1000, or keep")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_flag("--no-ionice", flags->no_ionice, "Keep the command's I/O priority");
  cmd->add_flag("--no-watch", flags->no_watch, "Do not start `sparkdoc watch` beside the command");
  cmd->add_option("--watch-interval", flags->watch_interval, "Telemetry sample interval")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_option("--log-dir", flags->log_dir,
                  "Folder for run.jsonl and watch.jsonl: a new one, or an empty one of yours that "
                  "only you can write (others could plant links in it). Default: a new "
                  "sparkdoc-runs/DATE-PID, where sparkdoc-runs must be yours in the same way")
      ->type_name("DIR");
  cmd->add_option("--watch-exe", flags->watch_exe, "Program to run as the watch sidecar (testing)")
      ->group("");
  flags->capture.add_to(*cmd);
  flags->capture.add_cache_option(*cmd);
  const CLI::App* parent = &app;
  return [flags, parent]() { return run_run(*flags, parent); };
}

}  // namespace sparkdoc::cli
