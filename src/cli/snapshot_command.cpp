#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "core/fs.h"
#include "model/snapshot_json.h"

namespace sparkdoc::cli {
namespace {

struct SnapshotFlags {
  CaptureFlags capture;
  std::string output;
  std::vector<std::string> diff;
};

Result<Snapshot> load(const std::string& path) {
  auto text = read_text(path, 256u << 20);
  if (!text) return tl::unexpected(text.error());
  auto parsed = snapshot_from_text(*text);
  if (!parsed) return fail(fmt::format("{}: {}", path, parsed.error().message));
  return parsed;
}

// Prints one line per reading that differs: "~ /gpu/nvml/devices/0/temperature_c: 45 -> 61".
int run_diff(const std::string& a_path, const std::string& b_path) {
  auto a = load(a_path);
  auto b = load(b_path);
  if (!a || !b) {
    std::cerr << "sparkdoc snapshot --diff: " << (!a ? a.error().message : b.error().message)
              << "\n";
    return kExitUsage;
  }
  nlohmann::json ja = snapshot_to_json(*a), jb = snapshot_to_json(*b);
  nlohmann::json patch = nlohmann::json::diff(ja, jb);
  int changes = 0;
  for (const auto& op : patch) {
    std::string path = op.at("path").get<std::string>();
    std::string kind = op.at("op").get<std::string>();
    if (path == "/taken_at") continue;
    nlohmann::json::json_pointer ptr(path);
    if (kind == "replace") {
      std::cout << fmt::format("~ {}: {} -> {}\n", path, ja.at(ptr).dump(), jb.at(ptr).dump());
    } else if (kind == "add") {
      std::cout << fmt::format("+ {}: {}\n", path, jb.at(ptr).dump());
    } else if (kind == "remove") {
      std::cout << fmt::format("- {}: {}\n", path, ja.at(ptr).dump());
    }
    ++changes;
  }
  std::cout << fmt::format("{} reading(s) differ between {} and {}\n", changes, a_path, b_path);
  return kExitReady;
}

int run_snapshot(const SnapshotFlags& flags) {
  if (!flags.diff.empty()) {
    if (flags.diff.size() != 2) {
      std::cerr << "sparkdoc snapshot --diff takes two snapshot files\n";
      return kExitUsage;
    }
    return run_diff(flags.diff[0], flags.diff[1]);
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
  cmd->add_option("--diff", flags->diff, "Compare two snapshot files: --diff A.json B.json")
      ->expected(2)
      ->type_name("FILE");
  flags->capture.add_to(*cmd);
  return [flags]() { return run_snapshot(*flags); };
}

}  // namespace sparkdoc::cli
