#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "checks/registry.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/snapshot_file.h"
#include "facts/platform.h"
#include "mem/account.h"
#include "mem/render.h"

namespace sparkdoc::cli {
namespace {

struct MemFlags {
  CaptureFlags capture;
  std::string snapshot_file;
  bool json = false;
  std::string html;
};

int run_mem(const MemFlags& flags) {
  Snapshot snapshot;
  std::string source = "live";
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) {
      std::cerr << "sparkdoc mem: " << loaded.error().message << "\n";
      return kExitUsage;
    }
    snapshot = std::move(*loaded);
    source = file_label(flags.snapshot_file);
  } else {
    CaptureOptions options = flags.capture.options();
    options.config_dir = "";  // tensor-parallel settings play no part in the accounting
    options.audit_native = false;  // nor does the native code (a cold cache: seconds of reads)
    snapshot = capture(options);
  }
  mem::MemReport report = mem::account(snapshot, facts::classify_platform(snapshot), source);
  if (!flags.html.empty() &&
      !write_html_page("sparkdoc mem", flags.html, mem::render_mem_html(report))) {
    return kExitUsage;
  }
  if (flags.json) {
    std::cout << mem::render_mem_json(report).dump(2, ' ', false,
                                                   nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << mem::render_mem_text(report);
  }
  std::cout.flush();
  return kExitReady;
}

}  // namespace

std::function<int()> add_mem_command(CLI::App& app) {
  auto flags = std::make_shared<MemFlags>();
  CLI::App* cmd = app.add_subcommand(
      "mem",
      "Where the memory is: total, available by NVIDIA's rule for unified memory, page cache and "
      "how much of it is reclaimable, anonymous, hugepages, swap, pressure; the GPU view, GPU "
      "memory per process, holders of /dev/nvidia* that NVML does not list, and an estimate of "
      "orphaned allocations with what to do about them. The memory is drawn first as one bar to "
      "scale (GPU processes, what no process accounts for, page cache, the rest in use, free) "
      "with a line where what is available begins; --html FILE draws it as a page. Changes "
      "nothing; exit 0, or 2 on a usage error.");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "Account a snapshot recorded with `sparkdoc snapshot -o FILE` instead of this "
                  "machine")
      ->type_name("FILE");
  cmd->add_flag("--json", flags->json, "Write the accounting as JSON to stdout");
  cmd->add_option("--html", flags->html,
                  "Also write the accounting as a self-contained HTML page (the pool as a bar, "
                  "each GPU, the processes; no network needed to view it)")
      ->type_name("FILE");
  flags->capture.add_to(*cmd);
  return [flags]() { return run_mem(*flags); };
}

}  // namespace sparkdoc::cli
