// `sparkdoc clean`: 000 §6 as a command. The options go to the clean engine (clean/clean.h),
// which plans from this machine or a recorded snapshot and carries the steps out; this file
// prints the plan or the run as it goes.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "clean/clean.h"
#include "clean/render.h"
#include "cli/cap_clocks_option.h"
#include "cli/commands.h"
#include "cli/root_option.h"
#include "cli/snapshot_file.h"
#include "core/units.h"
#include "tune/tunables.h"

namespace sparkdoc::cli {
namespace {

struct CleanFlags {
  bool yes = false;
  std::string need;
  bool stop_known = false;
  bool tune_vm = false;
  bool restore = false;
  bool json = false;
  bool no_gpu = false;
  CapClocksOption cap_clocks;
  std::string snapshot_file;
  std::string root;  // hidden: a fixture tree instead of the machine
};

std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Text mode: each step as it finishes on stdout, what a slow step is doing on stderr (so the
// report on stdout stays clean).
class CleanPrinter : public clean::Observer {
 public:
  void started(const clean::CleanReport& report) override {
    std::cout << clean::render_clean_header(report) << std::flush;
  }
  void working(std::string_view what) override {
    std::cerr << "sparkdoc clean: " << what << "...\n" << std::flush;
  }
  void finished(const clean::Step& step, size_t number) override {
    std::cout << clean::render_step_text(step, number) << std::flush;
  }
};

int run_restore(const CleanFlags& flags, const clean::Machine& machine) {
  auto location = clean::journal_location(machine);
  if (!location) {
    std::cerr << "sparkdoc clean --restore: " << location.error().message << "\n";
    return kExitUsage;
  }
  auto report = clean::restore(machine, *location);
  if (!report) {
    std::cerr << "sparkdoc clean --restore: " << report.error().message << "\n";
    return kExitBlocked;
  }
  if (flags.json) {
    std::cout << dump(clean::render_restore_json(*report)) << "\n";
  } else {
    std::cout << clean::render_restore_text(*report);
  }
  return report->complete() ? kExitReady : kExitBlocked;
}

int run_clean(const CleanFlags& flags) {
  clean::Options options;
  options.machine = clean::this_machine(flags.root.empty() ? Root() : Root(flags.root));
  auto cap = cap_clocks_of(flags.cap_clocks);
  if (flags.restore && (flags.yes || !flags.snapshot_file.empty() || cap)) {
    std::cerr << "sparkdoc clean: --restore stands alone (no --yes, no --snapshot, no "
                 "--cap-clocks)\n";
    return kExitUsage;
  }
  if (cap && !*cap) {
    std::cerr << "sparkdoc clean: " << cap->error().message << "\n";
    return kExitUsage;
  }
  if (cap && flags.no_gpu) {
    std::cerr << "sparkdoc clean: --cap-clocks needs NVML, which --no-gpu leaves out\n";
    return kExitUsage;
  }
  if (flags.yes && !flags.snapshot_file.empty()) {
    std::cerr << "sparkdoc clean: --snapshot shows the plan for a recorded machine; it cannot be "
                 "carried out (leave out --yes)\n";
    return kExitUsage;
  }
  if (flags.yes || flags.restore) {
    if (auto problem = tune::privilege_problem(options.machine.euid)) {
      std::cerr << "sparkdoc clean: " << *problem << ". Run it again with sudo"
                << (flags.yes ? ", or without --yes to see the plan" : "") << ".\n";
      return kExitUsage;
    }
  }
  if (flags.restore) return run_restore(flags, options.machine);

  if (!flags.need.empty()) {
    auto bytes = parse_memory_size(flags.need);
    if (!bytes) {
      std::cerr << "sparkdoc clean: --need: " << bytes.error().message << "\n";
      return kExitUsage;
    }
    options.need_bytes = *bytes;
    options.need_text = flags.need;
  }
  std::optional<clean::Recorded> recorded;
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) {
      std::cerr << "sparkdoc clean: " << loaded.error().message << "\n";
      return kExitUsage;
    }
    recorded = clean::Recorded{std::move(*loaded), file_label(flags.snapshot_file)};
  }
  options.execute = flags.yes;
  options.stop_known = flags.stop_known;
  options.tune_vm = flags.tune_vm;
  options.no_gpu = flags.no_gpu;
  if (cap) options.cap_clocks = **cap;

  CleanPrinter printer;
  clean::CleanReport report = clean::clean(options, recorded, flags.json ? nullptr : &printer);
  if (flags.json) {
    std::cout << dump(clean::render_clean_json(report)) << "\n";
  } else if (flags.yes) {
    std::cout << clean::render_clean_footer(report);
  } else {
    std::cout << clean::render_clean_text(report);
  }
  std::cout.flush();
  return report.any_failed() ? kExitBlocked : kExitReady;
}

}  // namespace

std::function<int()> add_clean_command(CLI::App& app) {
  auto flags = std::make_shared<CleanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "clean",
      "The cleanup before a model load (000 §6), dry run unless --yes: list GPU holders that are "
      "not training, stop known desktop services (--stop-known), report stale holders of "
      "/dev/nvidia*, sync and drop caches, tune vm for the load window (--tune-vm), reset swap, "
      "start a fresh CUDA context so the driver reclaims orphaned memory, measure, drop caches "
      "again, and judge the headroom against --need (70 GB on a DGX Spark by default). Changed "
      "values are journaled first; --restore puts them back. With --cap-clocks it also locks the "
      "GPU clocks for the training run (300-2200 MHz: the DGX Spark's fix for its power-off "
      "under load), journaled, until --restore. Exit 0 done (or dry run), 1 a step failed or not "
      "enough memory, 2 usage error or not root with --yes/--restore (then nothing is "
      "changed).\n"
      "Example: sudo sparkdoc clean --yes --tune-vm --cap-clocks");
  cmd->add_flag("--yes", flags->yes, "Carry the steps out (root needed); without it, a dry run");
  cmd->add_option("--need", flags->need,
                  "Memory the run needs, e.g. 70GB or 64GiB (default 70GB on a DGX Spark, none "
                  "elsewhere)")
      ->type_name("SIZE");
  cmd->add_flag("--stop-known", flags->stop_known,
                "Also stop gnome-remote-desktop (about 6 GB of GPU memory on a Spark) with "
                "systemctl");
  cmd->add_flag("--tune-vm", flags->tune_vm,
                "Set min_free_kbytes=1048576 and vfs_cache_pressure=500 for the load window "
                "(journaled; --restore puts them back)");
  add_cap_clocks_option(*cmd, flags->cap_clocks,
                        "for the training run that follows, until `sparkdoc clean --restore` "
                        "resets them as `nvidia-smi -rgc` does");
  cmd->add_flag("--restore", flags->restore,
                "Write back every value an earlier run journaled, reset the GPU clocks it "
                "locked, then remove the journal (root needed)");
  cmd->add_flag("--json", flags->json, "Write the plan or the run as JSON to stdout");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "Show the plan for a snapshot recorded with `sparkdoc snapshot -o FILE` (dry "
                  "run only)")
      ->type_name("FILE");
  cmd->add_flag("--no-gpu", flags->no_gpu, "Do not load NVML or the CUDA driver (no CUDA step)");
  add_root_option(*cmd, flags->root,
                  "Read and write /proc under this folder instead of the machine (testing)");
  return [flags]() { return run_clean(*flags); };
}

}  // namespace sparkdoc::cli
