#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/root_option.h"
#include "core/units.h"
#include "watch/watch.h"

namespace sparkdoc::cli {
namespace {

struct WatchFlags {
  std::string interval = "1s";
  std::string duration;
  int64_t count = -1;  // -1: not given (no limit)
  std::string log;
  std::string csv;
  std::string listen;
  std::string counter_interval = "5s";
  bool json = false;
  bool quiet = false;
  bool force = false;
  std::string root;
};

int run_watch_command(const WatchFlags& flags) {
  watch::WatchOptions options;
  auto interval = parse_duration_s(flags.interval);
  if (!interval || *interval < watch::kMinIntervalS) {
    std::cerr << "sparkdoc watch: --interval: "
              << (interval ? "at least 50ms" : interval.error().message) << "\n";
    return kExitUsage;
  }
  options.interval_s = *interval;
  if (!flags.duration.empty()) {
    auto duration = parse_duration_s(flags.duration);
    if (!duration) {
      std::cerr << "sparkdoc watch: --duration: " << duration.error().message << "\n";
      return kExitUsage;
    }
    options.duration_s = *duration;
  }
  if (flags.count == 0 || flags.count < -1) {
    std::cerr << "sparkdoc watch: --count: at least 1 (leave it out to watch until stopped)\n";
    return kExitUsage;
  }
  if (flags.count > 0) options.count = static_cast<uint64_t>(flags.count);
  auto counter_interval = parse_duration_s(flags.counter_interval);
  if (!counter_interval) {
    std::cerr << "sparkdoc watch: --counter-interval: " << counter_interval.error().message
              << "\n";
    return kExitUsage;
  }
  options.counter_interval_s = *counter_interval;
  if (!flags.listen.empty()) {
    auto address = watch::parse_listen_address(flags.listen);
    if (!address) {
      std::cerr << "sparkdoc watch: --listen " << address.error().message << "\n";
      return kExitUsage;
    }
    options.listen = *address;
  }
  options.log_path = flags.log;
  options.csv_path = flags.csv;
  options.replace_files = flags.force;
  options.output = flags.quiet  ? watch::Output::kQuiet
                   : flags.json ? watch::Output::kJson
                                : watch::Output::kAuto;
  if (!flags.root.empty()) options.root = Root(flags.root);
  return watch::run_watch(options, stdout, stderr);
}

}  // namespace

std::function<int()> add_watch_command(CLI::App& app) {
  auto flags = std::make_shared<WatchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "Sample the GPUs (NVML) and the host's memory (/proc) at an interval and judge each "
      "sample: a power plateau with climbing temperature (G4), clock slowdowns from the "
      "clock-event reasons and from their cumulative counters (GB10 often shows no reason while "
      "capped), SM clock drops, new GPU processes (G6), rising memory pressure and page-cache "
      "growth during a load. Writes a JSON Lines log (--log, flushed per line), the thermal "
      "sampler's CSV (--csv), Prometheus metrics (--listen) and a live view. Runs until "
      "--count, --duration, or Ctrl-C / SIGTERM; exit 0, or 2 when a file or the address "
      "cannot be opened.");
  cmd->add_option("--interval", flags->interval, "Time between samples: 1s, 500ms, 30s")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_option("--duration", flags->duration, "Stop after this long: 10m, 2h")
      ->type_name("DURATION");
  cmd->add_option("--count", flags->count, "Stop after N samples")->type_name("N");
  cmd->add_option("--log", flags->log,
                  "Write every sample and event as JSON Lines to FILE, a new file (an existing "
                  "one is refused unless --force)")
      ->type_name("FILE.jsonl");
  cmd->add_option("--csv", flags->csv,
                  "Write `timestamp, temperature.gpu, power.draw [W]` lines to FILE, as nvidia-smi "
                  "--query-gpu=timestamp,temperature.gpu,power.draw --format=csv does")
      ->type_name("FILE.csv");
  cmd->add_flag("--force", flags->force,
                "Replace an existing --log or --csv file with a new one; a symbolic link, a FIFO "
                "or a device there is refused even then, never written through");
  cmd->add_option("--listen", flags->listen,
                  "Serve Prometheus metrics (dcgm-exporter names, sparkdoc_* for unified memory) "
                  "at http://ADDR:PORT/metrics, e.g. 127.0.0.1:9400")
      ->type_name("ADDR:PORT");
  cmd->add_option("--counter-interval", flags->counter_interval,
                  "How often to read the clock-event counters, which cost more than the rest of "
                  "a sample together (about 1 ms of CPU on an H200); the energy counter (about "
                  "5 ms) is read at six times this interval. Cumulative, so nothing is lost but "
                  "resolution. 0 reads them at every sample")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "Write the log's JSON lines to stdout instead of the view");
  cmd->add_flag("--quiet", flags->quiet, "Print nothing but errors");
  add_root_option(*cmd, flags->root, "Read /proc under this folder (testing)");
  return [flags]() { return run_watch_command(*flags); };
}

}  // namespace sparkdoc::cli
