#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/snapshot_file.h"
#include "compare/diff.h"
#include "core/fs.h"
#include "model/snapshot_json.h"

namespace sparkdoc::cli {
namespace {

struct SnapshotFlags {
  CaptureFlags capture;
  std::string output;
  std::vector<std::string> diff;
  bool readings = false;
  bool all = false;
  bool json = false;
};

// Prints one line per reading that differs: "~ /gpu/nvml/devices/0/temperature_c: 45 -> 61",
// the moment-to-moment ones left out unless `all`. Exit 1 when one is shown.
int run_readings_diff(const std::string& a_path, const std::string& b_path, bool all, bool json) {
  auto a = load_snapshot_file(a_path);
  auto b = load_snapshot_file(b_path);
  if (!a || !b) {
    std::cerr << "sparkdoc snapshot --diff: " << (!a ? a.error().message : b.error().message)
              << "\n";
    return kExitUsage;
  }
  uint64_t mem_total = a->meminfo ? a->meminfo.value().mem_total_bytes : 0;
  compare::DiffReport report =
      compare::select_differences(compare::diff_snapshots(*a, *b), mem_total, all);
  if (json) {
    std::cout << compare::render_diff_json(report, a_path, b_path).dump(2) << "\n";
  } else {
    std::cout << compare::render_diff_text(report, a_path, b_path);
  }
  return report.shown.empty() ? kExitReady : kExitBlocked;
}

int run_snapshot(const SnapshotFlags& flags) {
  if (!flags.diff.empty()) {
    if (flags.diff.size() != 2) {
      std::cerr << "sparkdoc snapshot --diff takes two snapshot files\n";
      return kExitUsage;
    }
    if (!flags.readings)
      return compare_snapshots(flags.diff, flags.json, flags.all, "snapshot --diff");
    return run_readings_diff(flags.diff[0], flags.diff[1], flags.all, flags.json);
  }
  if (flags.readings || flags.all || flags.json) {
    std::cerr << "sparkdoc snapshot: --readings, --all and --json go with --diff A B (a snapshot "
                 "is JSON already)\n";
    return kExitUsage;
  }
  Snapshot snapshot = capture_live(flags.capture.options(), "snapshot");
  std::string text = snapshot_to_text(snapshot);
  if (flags.output.empty() || flags.output == "-") {
    std::cout << text;
    return kExitReady;
  }
  if (auto written = write_file(flags.output, text); !written) {
    std::cerr << "sparkdoc snapshot: " << written.error().message << "\n";
    return kExitUsage;
  }
  std::cerr << fmt::format("sparkdoc snapshot: wrote {} ({} bytes); judge it with `sparkdoc check "
                           "--snapshot {}`\n",
                           flags.output, text.size(), flags.output);
  return kExitReady;
}

}  // namespace

std::function<int()> add_snapshot_command(CLI::App& app) {
  auto flags = std::make_shared<SnapshotFlags>();
  flags->capture.cuda_devices_always = true;  // a snapshot is every reading
  CLI::App* cmd = app.add_subcommand(
      "snapshot",
      "Record every reading of this machine as one JSON document (for bug reports, for comparing "
      "nodes, for `check --snapshot`). Only the environment variables the checks judge are "
      "recorded.");
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of stdout")
      ->type_name("FILE");
  cmd->add_option("--diff", flags->diff,
                  "Compare two snapshot files: --diff A.json B.json is `sparkdoc compare A.json "
                  "B.json` (the readings that matter, each with its severity; exit 1 when one "
                  "breaks a multi-node job)")
      ->expected(2)
      ->type_name("FILE");
  cmd->add_flag("--readings", flags->readings,
                "With --diff: every reading that differs instead, by its JSON pointer, leaving "
                "out what differs from moment to moment on any machine (timings, memory figures "
                "within 1 %); exit 1 when one differs");
  cmd->add_flag("--all", flags->all,
                "With --diff: the readings that agree as well; with --readings, the "
                "moment-to-moment ones too");
  cmd->add_flag("--json", flags->json, "With --diff: write the differences as JSON");
  flags->capture.add_to(*cmd);
  flags->capture.add_cache_option(*cmd);
  return [flags]() { return run_snapshot(*flags); };
}

}  // namespace sparkdoc::cli
